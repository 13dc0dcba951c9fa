import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// The layers run one way: cli -> daemon / indexer -> db -> config, and families -> chains -> domain.
// The domain (pure rules) imports nothing from the layers above it; the chain registry (src/chains)
// is data and imports no family; a family imports no process and no store; the store (src/db) and
// the configuration nothing from the processes that use them; nothing outside src/cli imports
// src/cli. No file reaches itself through its imports.

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => join(file, '..', m[1]!));
}

/** Imports from the folder `from` (tests aside) whose target's path (under src/) matches `forbidden`. */
function crossings(from: string, forbidden: RegExp): string[] {
  return sources(join(SRC, from))
    .filter((f) => !f.endsWith('.test.ts'))
    .flatMap((f) => imports(f).filter((target) => forbidden.test(relative(SRC, target))).map((target) => `${relative(SRC, f)} -> ${relative(SRC, target)}`));
}

test('src/domain imports nothing from the layers above it', () => {
  assert.deepEqual(crossings('domain', /^(chains|families|config|db|daemon|indexer|cli)\//), []);
});

test('src/chains is data: it imports only the domain, never a chain family', () => {
  assert.deepEqual(crossings('chains', /^(?!chains\/|domain\/)/), []);
});

test('a chain family imports no store and no process', () => {
  assert.deepEqual(crossings('families', /^(db|daemon|indexer|cli)\//), []);
});

test('only src/cli imports src/cli', () => {
  const offending = sources(SRC)
    .filter((f) => !relative(SRC, f).startsWith('cli/') && !f.endsWith('.test.ts'))
    .flatMap((f) => imports(f).filter((target) => relative(SRC, target).startsWith('cli/')).map((target) => `${relative(SRC, f)} -> ${relative(SRC, target)}`));
  assert.deepEqual(offending, []);
});

test('src/db and src/config import nothing from daemon, indexer, families or cli; src/config nothing from db', () => {
  const offending = [...sources(join(SRC, 'db')), ...sources(join(SRC, 'config'))].flatMap((f) =>
    imports(f)
      .filter((target) => /^(daemon|indexer|families|cli)\//.test(relative(SRC, target)) || (relative(SRC, f).startsWith('config/') && relative(SRC, target).startsWith('db/')))
      .map((target) => `${relative(SRC, f)} -> ${relative(SRC, target)}`),
  );
  assert.deepEqual(offending, []);
});

/** Groups of files that reach each other through their imports (Tarjan's strongly connected components). */
function circles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, imports(f).filter((t) => graphHas(t))]));
  function graphHas(t: string): boolean {
    return files.includes(t);
  }
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(relative(SRC, w));
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return out;
}

test('no import circles', () => {
  assert.deepEqual(circles(sources(SRC).filter((f) => !f.endsWith('.test.ts'))), []);
});
