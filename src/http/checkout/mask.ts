// Masking of buyer details on the public invoice (spec "Public invoice"): whoever holds the invoice
// id sees that a name and an address exist and can recognise their own, but cannot read them.

const STARS = '***';

/** First character of the local part, three asterisks, then the domain: `j***@example.com`. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return maskWord(email);
  return `${maskWord(email.slice(0, at))}${email.slice(at)}`;
}

/** Each word as its first character plus three asterisks: `Jane Doe` -> `J*** D***`. */
export function maskName(name: string): string {
  return name
    .split(/\s+/u)
    .filter((word) => word.length > 0)
    .map(maskWord)
    .join(' ');
}

function maskWord(word: string): string {
  // By code point, so a name starting with an emoji or an astral character is not split in half.
  const [first = ''] = Array.from(word);
  return `${first}${STARS}`;
}
