import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DEFAULT_CONFIG_PATH, loadConfig, redactConfig } from './load-config.ts';

function file(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'cg-config-')), name);
  writeFileSync(path, text);
  return path;
}

function fails(env: NodeJS.ProcessEnv, pattern: RegExp): void {
  assert.throws(
    () => loadConfig({ env }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.match(err.message, pattern);
      assert.equal(err.message.split('\n').length, 1, 'one line');
      return true;
    },
  );
}

test('loadConfig() gives the defaults with no file and no environment', () => {
  const { config, file: f } = loadConfig({ env: {} });
  assert.equal(f, null);
  assert.equal(config.database.url, 'sqlite:./data/chaingate.db');
  assert.equal(config.server.host, '127.0.0.1');
  assert.equal(config.server.port, 8080);
  assert.equal(config.security.masterKey, null);
  assert.equal(config.pricing.mode, 'convert');
  assert.equal(config.webhooks.allowPrivateNetworks, false);
});

test('an operator YAML file overrides defaults key by key', () => {
  const path = file('c.yaml', 'server:\n  port: 9090\nlog:\n  level: debug\n');
  const { config } = loadConfig({ env: { CHAINGATE_CONFIG: path } });
  assert.equal(config.server.port, 9090);
  assert.equal(config.server.host, '127.0.0.1', 'siblings keep their defaults');
  assert.equal(config.log.level, 'debug');
});

test('a JSON operator file loads too', () => {
  const path = file('c.json', JSON.stringify({ server: { host: '0.0.0.0' }, pricing: { mode: 'verbatim' } }));
  const { config } = loadConfig({ env: { CHAINGATE_CONFIG: path } });
  assert.equal(config.server.host, '0.0.0.0');
  assert.equal(config.pricing.mode, 'verbatim');
});

test('environment variables override the file', () => {
  const path = file('c.yaml', 'server:\n  port: 9090\n');
  const { config } = loadConfig({
    env: {
      CHAINGATE_CONFIG: path,
      CHAINGATE_PORT: '7000',
      CHAINGATE_HOST: '::1',
      CHAINGATE_DATABASE_URL: 'postgres://u:pw@db:5432/cg',
      CHAINGATE_MASTER_KEY: 'm'.repeat(40),
      CHAINGATE_LOG_LEVEL: 'warn',
    },
  });
  assert.equal(config.server.port, 7000);
  assert.equal(config.server.host, '::1');
  assert.equal(config.database.url, 'postgres://u:pw@db:5432/cg');
  assert.equal(config.log.level, 'warn');
  const shown = redactConfig(config);
  assert.equal(shown.security.masterKey, '[redacted]');
  assert.equal(shown.database.url, 'postgres://u:[redacted]@db:5432/cg');
});

test('each kind of bad value stops with one line naming key, problem and source', () => {
  fails({ CHAINGATE_PORT: 'abc' }, /^config error: server\.port: .* — from environment variable CHAINGATE_PORT$/);
  fails({ CHAINGATE_PORT: '70000' }, /server\.port: .*65535.*CHAINGATE_PORT/);
  fails({ CHAINGATE_LOG_LEVEL: 'loud' }, /log\.level: .*"loud".*CHAINGATE_LOG_LEVEL/);
  fails({ CHAINGATE_DATABASE_URL: 'mysql://x' }, /database\.url: must be sqlite:<path> or postgres/);
  fails({ CHAINGATE_MASTER_KEY: 'short' }, /security\.masterKey: at least 32 characters .*\(got "\[redacted\]"\)/);
  const unknown = file('u.yaml', 'server:\n  prot: 1\n');
  fails({ CHAINGATE_CONFIG: unknown }, new RegExp(`server\\.prot: unknown key — from ${unknown.replace(/[.]/g, '\\.')}`));
  const wrongType = file('w.yaml', 'webhooks:\n  maxAttempts: "many"\n');
  fails({ CHAINGATE_CONFIG: wrongType }, /webhooks\.maxAttempts: .*"many".*w\.yaml/);
  const broken = file('b.yaml', 'server: [unclosed\n');
  fails({ CHAINGATE_CONFIG: broken }, /is not valid YAML or JSON/);
  fails({ CHAINGATE_CONFIG: '/nonexistent/chaingate.yaml' }, /cannot read \/nonexistent\/chaingate\.yaml: ENOENT/);
  const scalar = file('s.yaml', '42\n');
  fails({ CHAINGATE_CONFIG: scalar }, /mapping of keys/);
  assert.ok(DEFAULT_CONFIG_PATH.endsWith('config/default.yaml'));
});
