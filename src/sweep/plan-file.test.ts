import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SweepPlan } from '../families/sweep.ts';
import { canonicalJson, planId, readPlanFile, readSignedFile, writePlanFile, writeSignedFile } from './plan-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'chaingate-plan-file-'));

function plan(): SweepPlan {
  const body = {
    format: 'chaingate-sweep-plan/1',
    kind: 'sweep',
    chain: 'bitcoin',
    family: 'bitcoin',
    network: 'REGTEST',
    testnet: true,
    to: 'bcrt1qgfpyyss5ggcyyqepqsgygfpvyss5gggd7x4dex',
    feePayer: null,
    createdAt: '2026-11-25T00:00:00.000Z',
    deposits: [{ address: 'bcrt1qa', derivationIndex: 0, source: 'abc', holdings: [], moves: [{ symbol: 'BTC', token: null, decimals: 8, amount: '1000' }], fee: '10', leftBehind: [] }],
    skipped: [],
    transactions: [{ id: 'tx-0', signers: ['bcrt1qa'], deposits: ['bcrt1qa'], after: [], payload: { psbt: 'cHNidP8=' } }],
  } as Omit<SweepPlan, 'id'>;
  return { ...body, id: planId(body) } as SweepPlan;
}

test('canonicalJson sorts keys at every level, so key order never changes an id', () => {
  assert.equal(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } }), '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}');
  const p = plan();
  const reordered = Object.fromEntries(Object.entries(p).reverse()) as unknown as SweepPlan;
  assert.equal(planId(reordered), p.id);
});

test('a plan file reads back; any change to it (destination, amount, an added field) is refused by its id', () => {
  const path = join(dir, 'plan.json');
  writePlanFile(path, plan());
  assert.deepEqual(readPlanFile(path), plan());
  for (const [what, change] of [
    ['destination', (p: Record<string, unknown>) => (p.to = 'bcrt1qattacker')],
    ['amount', (p: Record<string, unknown>) => ((p.deposits as { moves: { amount: string }[] }[])[0]!.moves[0]!.amount = '999999')],
    ['an extra field', (p: Record<string, unknown>) => (p.note = 'x')],
  ] as const) {
    const p = plan() as unknown as Record<string, unknown>;
    change(p);
    writeFileSync(path, JSON.stringify(p));
    assert.throws(() => readPlanFile(path), what === 'an extra field' ? /not a valid sweep plan/ : /was changed after `sweep plan` wrote it/, what);
  }
});

test('a signed file is written 0600 and is not taken for a plan, nor a plan for it', () => {
  const signedPath = join(dir, 'signed.json');
  writeSignedFile(signedPath, { format: 'chaingate-sweep-signed/1', planId: plan().id, chain: 'bitcoin', network: 'REGTEST', testnet: true, transactions: [{ id: 'tx-0', raw: '00', txid: 'ab' }] });
  assert.equal(statSync(signedPath).mode & 0o777, 0o600);
  assert.throws(() => readPlanFile(signedPath), /is a signed sweep \(signed\.json\), not a plan/);
  const planPath = join(dir, 'plan2.json');
  writePlanFile(planPath, plan());
  assert.throws(() => readSignedFile(planPath), /is an unsigned plan: sign it first/);
  writeFileSync(planPath, 'not json');
  assert.throws(() => readPlanFile(planPath), /is not JSON/);
});
