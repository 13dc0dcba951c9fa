import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Contract } from 'ethers';
import { parseUnits } from 'ethers';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import type { StatusReport } from '../../src/app/status-report.ts';
import { getFreePort } from '../../src/devnet/hardhat-node.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { REQUIRED_CONFIRMATIONS, startEvmWorld } from '../helpers/evm-world.ts';
import { spawnIndexer, waitFor, writeConfigFile, type IndexerProcess } from '../helpers/indexer-process.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { sample } from '../helpers/prometheus.ts';

// An indexer whose endpoint does not answer says so everywhere: its start-up line names chain,
// network and endpoint (never a key), every retried call names endpoint, method and cause, and
// `status`, `status --json` and serve's /metrics show it failing — even before its first block.

const MASTER_KEY = 'e'.repeat(64);
// Keys where providers put them: Infura/Alchemy in the path, others in the query, toncenter in a header.
const PATH_KEY = 'c0ffee0123456789abcdef0123456789';
const QUERY_KEY = 'q5ecretQueryKey987';
const HEADER_KEY = 'toncenter-secret-header-key';


/** The JSON log lines of a process's output (stderr), and its other lines (stdout). */
function lines(output: string): { logs: Record<string, unknown>[]; plain: string[] } {
  const logs: Record<string, unknown>[] = [];
  const plain: string[] = [];
  for (const line of output.split('\n').filter(Boolean)) {
    try {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if ('level' in parsed) logs.push(parsed);
      else plain.push(line);
    } catch {
      plain.push(line);
    }
  }
  return { logs, plain };
}

const CASES = [
  { chain: 'ethereum', method: 'eth_chainId', msg: 'RPC call failed; retrying', json: true },
  { chain: 'solana', method: 'getGenesisHash', msg: 'chain API call failed; retrying', json: false },
  { chain: 'ton', method: '/api/v3/masterchainInfo', msg: 'chain API call failed; retrying', json: false },
] as const;

for (const dialect of DIALECTS) {
  describe(`an indexer that cannot reach its endpoint, on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('names chain, network and endpoint at start-up, endpoint, method and cause on every retry; status, status --json and /metrics show it failing', async (t) => {
      const tdb = await createTestDatabase(dialect, { migrated: true });
      t.after(() => tdb.drop());
      const port = await getFreePort(); // nothing listens there: every connection is refused
      const origin = `http://127.0.0.1:${port}`;
      const chains = {
        ethereum: { mainnet: { rpcUrl: `${origin}/v3/${PATH_KEY}` } },
        solana: { mainnet: { rpcUrl: `${origin}/?api-key=${QUERY_KEY}` } },
        ton: { mainnet: { rpcUrl: `${origin}/${PATH_KEY}`, apiKey: HEADER_KEY } },
      };
      const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: MASTER_KEY, CHAINGATE_CONFIG: writeConfigFile({ chains, indexer: { rpcTimeoutMs: 2000 } }) };

      const procs = new Map<string, IndexerProcess>();
      for (const c of CASES) procs.set(c.chain, spawnIndexer([c.chain, ...(c.json ? ['--json'] : [])], env));
      t.after(async () => {
        for (const p of procs.values()) await p.stop('SIGKILL');
      });

      // status --json on the same database shows all three failing, though none has read a block.
      const report = await waitFor(
        'status --json to show the three indexers failing',
        async () => {
          const res = await runCli(['status', '--json'], env);
          if (res.code !== 0) return null;
          const r = JSON.parse(res.stdout) as StatusReport;
          return CASES.every((c) => r.indexers.find((i) => i.chain === c.chain)?.failing) ? { r, text: res.stdout } : null;
        },
        60_000,
        500,
      );
      for (const c of CASES) {
        const i = report.r.indexers.find((x) => x.chain === c.chain)!;
        assert.equal(i.network, 'MAINNET');
        assert.equal(i.block, null, 'no block read yet');
        assert.equal(i.updatedAt, null);
        assert.equal(i.endpoint, origin);
        assert.ok(i.failingSince && Date.parse(i.failingSince) <= Date.parse(report.r.generatedAt), `failing since ${i.failingSince}`);
        assert.equal(i.lastErrorAt, i.failingSince);
        assert.match(i.lastError ?? '', new RegExp(`^${c.method.replace(/\//g, '\\/')} at ${origin.replace(/\./g, '\\.')} failed \\d+ times: connect ECONNREFUSED 127\\.0\\.0\\.1:${port}$`));
        assert.ok(
          report.r.recentErrors.some((e) => e.source === `indexer ${c.chain} MAINNET` && e.message === i.lastError),
          `${c.chain} among the recent errors`,
        );
      }

      // Each process: one start-up line, then retries naming endpoint, method and cause; no key anywhere.
      for (const c of CASES) {
        const p = procs.get(c.chain)!;
        await waitFor(`${c.chain}: three retried calls`, async () => lines(p.output()).logs.filter((l) => l.msg === c.msg).length >= 3, 30_000);
        const out = p.output();
        const { logs, plain } = lines(out);
        if (c.json) {
          const startup = plain.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => 'indexing' in l);
          assert.equal(startup.length, 1, out);
          assert.deepEqual(startup[0], { indexing: { chain: c.chain, network: 'MAINNET', testnet: false, endpoint: origin }, pid: p.child.pid });
        } else {
          assert.deepEqual(plain, [`indexing ${c.chain} MAINNET via ${origin} (pid ${p.child.pid})`], out);
        }
        const retries = logs.filter((l) => l.msg === c.msg);
        for (const r of retries) {
          assert.equal(r.endpoint, origin);
          assert.equal(r.method, c.method);
          assert.equal(r.error, `connect ECONNREFUSED 127.0.0.1:${port}`);
        }
        for (const secret of [PATH_KEY, QUERY_KEY, HEADER_KEY]) assert.ok(!out.includes(secret), `${c.chain} never prints ${secret}`);
        assert.doesNotMatch(out, /fetch failed|"path":""/);
      }

      // The human status: a FAILING row, and under it since when and why.
      const human = await runCli(['status'], env);
      assert.equal(human.code, 0, human.stderr);
      for (const c of CASES) {
        assert.match(human.stdout, new RegExp(`${c.chain}\\s+MAINNET\\s+FAILING\\s+-\\s+-\\s+-\\s+${origin.replace(/\./g, '\\.')}`));
        assert.match(human.stdout, new RegExp(`failing since \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(\\d+ s ago\\): ${c.method.replace(/\//g, '\\/')} at ${origin.replace(/\./g, '\\.')} failed \\d+ times: connect ECONNREFUSED`));
      }
      for (const text of [human.stdout, report.text]) for (const secret of [PATH_KEY, QUERY_KEY, HEADER_KEY]) assert.ok(!text.includes(secret), `status never prints ${secret}`);

      // serve's /metrics on the same database: failing 1 since a time, no height for a chain never read.
      const metricsPort = await getFreePort();
      const serve = await spawnServe({ ...env, CHAINGATE_METRICS_PORT: String(metricsPort) });
      t.after(() => serve.stop());
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      for (const c of CASES) {
        const l = { chain: c.chain, network: 'MAINNET' };
        assert.equal(sample(metrics, 'chaingate_indexer_failing', l), 1, `${c.chain} failing`);
        const since = Date.parse(report.r.indexers.find((i) => i.chain === c.chain)!.failingSince!) / 1000;
        assert.equal(sample(metrics, 'chaingate_indexer_last_error_timestamp_seconds', l), since);
        assert.equal(sample(metrics, 'chaingate_indexer_up', l), 0, 'it never took its lease');
        assert.equal(sample(metrics, 'chaingate_indexer_height', l), undefined, 'no height before its first block');
      }
      assert.match(metrics, /# HELP chaingate_indexer_failing 1 while the indexer is failing/);
    });
  });
}

test('an indexer that failed before its first block starts from the head once its endpoint answers, and is no longer failing', async (t) => {
  const port = await getFreePort();
  const w = await startEvmWorld(t, { dialect: 'sqlite', rpcUrl: async () => `http://127.0.0.1:${port}/v3/${PATH_KEY}` });
  const p = w.startIndexer();
  const em = () => w.d.common.db.em();
  const placeholder = await waitFor('the failure recorded', async () => (await em().findOne(IndexerCursor, { chain: 'ethereum', network: 'MAINNET' }, { disableIdentityMap: true }))?.lastError ?? null, 30_000);
  assert.match(placeholder, /^eth_chainId at http:\/\/127\.0\.0\.1:\d+ failed \d+ times: connect ECONNREFUSED/);

  // The endpoint comes up: a plain forwarder to the Hardhat node on the port that refused.
  const forwarder = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      fetch(w.node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => forwarder.listen(port, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => forwarder.close(() => resolve())));

  const head = BigInt(await w.node.provider.getBlockNumber());
  const cursor = await waitFor(
    'a good poll',
    async () => {
      const c = await em().findOne(IndexerCursor, { chain: 'ethereum', network: 'MAINNET' }, { disableIdentityMap: true });
      return c && c.lastError === null && c.headSeenAt ? c : null;
    },
    60_000,
  );
  assert.equal(cursor.lastErrorAt, null);
  assert.notEqual(cursor.blockHash, '', 'a real position');
  assert.ok(BigInt(cursor.blockNumber) >= head - BigInt(REQUIRED_CONFIRMATIONS) - 1n, `starts near the head (${cursor.blockNumber}, head ${head}), not at block 0`);
  assert.match(p.output(), /indexer cursor initialised/);

  // And it indexes: a payment made now is credited.
  const payment = await w.openPayment('USDC');
  await (await (w.fx.usdc.connect(w.fx.payer) as Contract).getFunction('transfer')(payment.address, parseUnits('25', 6))).wait();
  await w.node.mine(REQUIRED_CONFIRMATIONS);
  const done = await w.waitStatus(payment.id, ['COMPLETED'], 60_000);
  assert.equal(done.receivedAmount, '25');

  const status = await runCli(['status', '--json'], w.env);
  const i = (JSON.parse(status.stdout) as StatusReport).indexers.find((x) => x.chain === 'ethereum')!;
  assert.deepEqual([i.failing, i.failingSince, i.lastError, i.running], [false, null, null, true]);
  assert.doesNotMatch(p.output(), new RegExp(PATH_KEY));
});
