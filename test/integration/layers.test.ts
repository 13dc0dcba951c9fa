import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// The layers run one way: cli -> daemon / indexers -> db -> domain. The domain (pure rules) imports
// nothing from the layers above it, and nothing outside src/cli imports src/cli.

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => join(file, '..', m[1]!));
}

test('src/domain imports nothing from db, daemon, indexers or cli', () => {
  const offending = sources(join(SRC, 'domain')).flatMap((f) =>
    imports(f).filter((target) => /^(db|daemon|indexers|cli)\//.test(relative(SRC, target))).map((target) => `${relative(SRC, f)} -> ${relative(SRC, target)}`),
  );
  assert.deepEqual(offending, []);
});

test('only src/cli imports src/cli', () => {
  const offending = sources(SRC)
    .filter((f) => !relative(SRC, f).startsWith('cli/') && !f.endsWith('.test.ts'))
    .flatMap((f) => imports(f).filter((target) => relative(SRC, target).startsWith('cli/')).map((target) => `${relative(SRC, f)} -> ${relative(SRC, target)}`));
  assert.deepEqual(offending, []);
});
