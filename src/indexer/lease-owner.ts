import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * Where a process id means one process: this kernel's boot and this pid namespace (Linux). Null
 * elsewhere, and then no holder is ever judged gone: its lease is waited out.
 */
function pidPlace(): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim().replace(/-/g, '');
    const ns = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    return /^[0-9a-f]{32}$/.test(boot) && ns ? `${boot}.${ns}` : null;
  } catch {
    return null;
  }
}

const PLACE = pidPlace();

/** This process as an indexer lease owner: `pid-random@boot.pidns` (at most 64 characters). */
export function leaseOwnerId(): string {
  const id = `${process.pid}-${randomBytes(4).toString('hex')}`;
  return PLACE ? `${id}@${PLACE}` : id;
}

/**
 * Whether a lease owner is a process of this kernel and pid namespace that no longer exists (killed,
 * crashed): its lease can be taken at once instead of waited out. Anything else (another machine,
 * another container, a live or reused pid, an older owner format) is not gone. Taking a lease
 * over is safe even if this were wrong: every write of an indexer is fenced by its owner
 * (src/indexer/ledger.ts), so a holder that lost its lease commits nothing more.
 */
export function ownerIsGone(owner: string): boolean {
  const m = /^(\d+)-[0-9a-f]{8}@([0-9a-f]{32}\.\d+)$/.exec(owner);
  if (!m || !PLACE || m[2] !== PLACE) return false;
  const pid = Number(m[1]);
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
