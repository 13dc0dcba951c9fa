// Human reference ids: INV-YYMMDD-NNNL / PAY-YYMMDD-NNNL. NNN is the day's sequence number (at least
// three digits, more after 999), L a check letter over the date and number that catches a mistyped
// digit or swapped neighbours when a buyer reads the id to support. Never a lookup key (spec).

export type ReferenceKind = 'INV' | 'PAY';

export function referenceDay(now: Date): string {
  const yy = String(now.getUTCFullYear() % 100).padStart(2, '0');
  const mm = String(now.getUTCMonth() + 1).padStart(2, '0');
  const dd = String(now.getUTCDate()).padStart(2, '0');
  return `${yy}${mm}${dd}`;
}

export function checkLetter(digits: string): string {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) sum += (i + 1) * (digits.charCodeAt(i) - 48);
  return String.fromCharCode(65 + (sum % 26));
}

export function formatReferenceId(kind: ReferenceKind, day: string, sequence: number): string {
  const number = String(sequence).padStart(3, '0');
  return `${kind}-${day}-${number}${checkLetter(day + number)}`;
}

export function isValidReferenceId(value: string): boolean {
  const m = /^(INV|PAY)-(\d{6})-(\d{3,})([A-Z])$/.exec(value);
  return m !== null && checkLetter(m[2]! + m[3]!) === m[4];
}
