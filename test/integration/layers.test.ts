import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// The layers run one way: cli -> daemon / indexers -> db -> config, domain. The domain (pure rules)
// imports nothing from the layers above it, the store (src/db) and the configuration nothing from
// the processes that use them, and nothing outside src/cli imports src/cli. No file reaches itself
// through its imports, except inside the chain families' circle that issue 28 dissolves.

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

test('src/db and src/config import nothing from daemon, indexers or cli; src/config nothing from db', () => {
  const offending = [...sources(join(SRC, 'db')), ...sources(join(SRC, 'config'))].flatMap((f) =>
    imports(f)
      .filter((target) => /^(daemon|indexers|cli)\//.test(relative(SRC, target)) || (relative(SRC, f).startsWith('config/') && relative(SRC, target).startsWith('db/')))
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

test('no import circles outside the chain families', () => {
  const files = sources(SRC).filter((f) => !f.endsWith('.test.ts'));
  const outside = circles(files).filter((group) => !group.every((f) => /^(chains|indexers)\//.test(f)));
  assert.deepEqual(outside, []);
});
