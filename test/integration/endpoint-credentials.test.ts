import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { getFreePort } from '../../src/devnet/hardhat-node.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startEvmWorld } from '../helpers/evm-world.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { listenLocal } from '../helpers/local-server.ts';
import { spawnServe } from '../helpers/serve-process.ts';

// Credentials planted in every place a provider puts them (user info, path, query) never come out
// of any process: not in a log line, `status`, `config check`, serve's /metrics, nor a stored row.
// And such a URL works: the user info travels as a Basic Authorization header.

const USER = 'plantedUser4711';
const PASSWORD = 'PlantedPassw0rd!x';
const PATH_KEY = 'p4thKey0123456789abcdef';
const QUERY_KEY = 'qu3ryKey9876543210';
const SECRETS = [USER, PASSWORD, encodeURIComponent(PASSWORD), PATH_KEY, QUERY_KEY, Buffer.from(`${USER}:${PASSWORD}`).toString('base64')];

function leaks(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s));
}

for (const dialect of DIALECTS) {
  describe(`an endpoint URL carrying credentials, on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('is used with a Basic Authorization header and shown only as scheme://host[:port] by index, status, config check, serve and the database', async (t) => {
      // The node behind a gate that wants the credentials as a header and the keys in path and query.
      let authorized = 0;
      let refused = 0;
      let gate: { url: string; close(): Promise<void> } | null = null;
      const w = await startEvmWorld(t, {
        dialect,
        rpcUrl: async (nodeUrl) => {
          const server = createServer((req, res) => {
            const auth = req.headers.authorization ?? '';
            const basic = Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString();
            if (basic !== `${USER}:${PASSWORD}` || req.url !== `/${PATH_KEY}?apikey=${QUERY_KEY}`) {
              refused++;
              res.writeHead(401, { 'content-type': 'text/plain' }).end('no');
              return;
            }
            authorized++;
            const chunks: Buffer[] = [];
            req.on('data', (c: Buffer) => chunks.push(c));
            req.on('end', () => {
              fetch(nodeUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
                .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
                .catch(() => res.writeHead(502).end());
            });
          });
          gate = await listenLocal(server);
          const { port } = new URL(gate.url);
          return `http://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/${PATH_KEY}?apikey=${QUERY_KEY}`;
        },
      });
      t.after(() => gate?.close());
      const origin = gate!.url;

      // A second chain whose endpoint, credentials and all, refuses connections: its failure is stored.
      const deadPort = await getFreePort();
      const deadOrigin = `http://127.0.0.1:${deadPort}`;
      const chains = { ...w.chains, solana: { mainnet: { rpcUrl: `http://${USER}:${encodeURIComponent(PASSWORD)}@127.0.0.1:${deadPort}/${PATH_KEY}?api-key=${QUERY_KEY}` } } };
      const env = { ...w.env, CHAINGATE_CONFIG: writeConfigFile({ chains, indexer: w.indexerConfig }) };

      const eth = spawnIndexer(['ethereum'], env);
      const sol = spawnIndexer(['solana', '--json'], env);
      t.after(async () => {
        await eth.stop('SIGKILL');
        await sol.stop('SIGKILL');
      });
      const em = () => w.d.common.db.em();
      const cursor = (chain: string) => em().findOne(IndexerCursor, { chain, network: 'MAINNET' }, { disableIdentityMap: true });
      await waitFor('the ethereum indexer through the gate', async () => {
        const c = await cursor('ethereum');
        return c?.headSeenAt && c.lastError === null;
      }, 60_000);
      assert.ok(authorized > 0, 'the node was reached with the credentials as a header');
      assert.equal(refused, 0, 'no request without them');
      const failure = await waitFor('the solana failure stored', async () => (await cursor('solana'))?.lastError ?? null, 60_000);
      assert.match(failure, new RegExp(`^getGenesisHash at ${deadOrigin.replace(/\./g, '\\.')} failed \\d+ times: connect ECONNREFUSED`));

      const outputs: Record<string, string> = {};
      const stdout: Record<string, string> = {};
      for (const args of [['status'], ['status', '--json'], ['config', 'check'], ['config', 'check', '--json']]) {
        const res = await runCli(args, env);
        assert.equal(res.code, 0, res.stderr);
        outputs[args.join(' ')] = res.stdout + res.stderr;
        stdout[args.join(' ')] = res.stdout;
      }
      assert.match(outputs.status!, new RegExp(`ethereum\\s+MAINNET\\s+\\S+.*${origin.replace(/\./g, '\\.')}`));
      const checked = JSON.parse(stdout['config check --json']!) as { config: { chains: { ethereum: { mainnet: { rpcUrl: string } }; solana: { mainnet: { rpcUrl: string } } } } };
      assert.equal(checked.config.chains.ethereum.mainnet.rpcUrl, origin);
      assert.equal(checked.config.chains.solana.mainnet.rpcUrl, deadOrigin);

      // serve on the same database and config, with its metrics and a request or two, then a SIGTERM.
      const metricsPort = await getFreePort();
      const serve = await spawnServe({ ...env, CHAINGATE_LOG_LEVEL: 'debug', CHAINGATE_METRICS_PORT: String(metricsPort) });
      outputs.metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(outputs.metrics, /chaingate_indexer_failing\{[^}]*chain="solana"[^}]*\} 1/);
      outputs.readyz = await (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).text();
      await serve.stop();
      outputs.serve = serve.output();

      await eth.stop('SIGTERM');
      await sol.stop('SIGTERM');
      outputs.index = eth.output();
      outputs.solana = sol.output();
      assert.match(outputs.index, /indexing ethereum MAINNET via http:\/\/127\.0\.0\.1:\d+ \(pid/);
      assert.ok(outputs.solana.includes(`"endpoint":"${deadOrigin}"`), outputs.solana);

      // Every stored row of every table.
      const conn = em().getConnection();
      const tables = dialect === 'sqlite'
        ? ((await conn.execute("select name from sqlite_master where type = 'table'")) as { name: string }[]).map((r) => r.name)
        : ((await conn.execute('select tablename as name from pg_tables where schemaname = current_schema()')) as { name: string }[]).map((r) => r.name);
      assert.ok(tables.includes('indexer_cursor'), tables.join(','));
      for (const table of tables) outputs[`table ${table}`] = JSON.stringify(await conn.execute(`select * from "${table}"`));

      for (const [where, text] of Object.entries(outputs)) assert.deepEqual(leaks(text), [], `${where} shows no credential:\n${text.slice(0, 4000)}`);
    });
  });
}
