import { UsageError } from '../domain/errors.ts';

/** `--limit <n>` of the list commands: 1 to 10,000 rows. */
export function parseLimit(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 1 || n > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  return n;
}
