// The bytes32 externalId of a contract payment is its UUID's 128 bits, left-padded with zeros to
// 32 bytes: 0x + 32 zeros + the UUID's hex without dashes (docs/api.md). Reversible and readable.

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function externalIdFromUuid(uuid: string): string {
  if (!UUID_RE.test(uuid)) throw new RangeError(`not a UUID: ${uuid}`);
  return `0x${'0'.repeat(32)}${uuid.replace(/-/g, '').toLowerCase()}`;
}

export function uuidFromExternalId(externalId: string): string | null {
  const m = /^0x0{32}([0-9a-f]{32})$/i.exec(externalId);
  if (!m) return null;
  const h = m[1]!.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
