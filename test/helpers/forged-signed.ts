import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SignedSweep } from '../../src/families/sweep.ts';
import { runCli } from './cli.ts';

// What every family's CLI test shows of `sweep broadcast` (docs/sweeps.md#sweep-broadcast): a signed
// file edited after signing is refused in one line with exit code 2, and nothing reaches the chain.

/** A name, an edit of the genuine file's transactions, and the refusal expected. */
export type Forgery = [string, (t: SignedSweep['transactions']) => void, RegExp];

export async function refusesForgeries(input: {
  genuine: SignedSweep;
  forgeries: Forgery[];
  dir: string;
  env: Record<string, string>;
  /** Asserts, for the forgery named, that nothing was sent and the chain is unchanged. */
  nothingSent: (name: string) => void | Promise<void>;
}): Promise<void> {
  for (const [name, edit, message] of input.forgeries) {
    const forged = structuredClone(input.genuine);
    edit(forged.transactions);
    const file = join(input.dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(forged), { mode: 0o600 });
    const r = await runCli(['sweep', 'broadcast', '--signed', file, '--wait'], input.env, { cwd: input.dir });
    assert.equal(r.code, 2, `${name}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, message, name);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: one line`);
    await input.nothingSent(name);
  }
}
