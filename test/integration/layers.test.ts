import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// The layers run one way: cli -> daemon (the serve process) -> http / metrics -> app (use cases),
// webhooks, indexer, sweep, report -> store -> config, and families -> chains -> domain. The domain
// (pure rules) imports nothing but itself; the chain registry (src/chains) is data and imports no
// family; a family imports no process, no use case and no store; the store and the configuration
// nothing from the layers that use them; nothing outside src/cli imports src/cli. No file reaches
// itself through its imports.

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

test('src/domain imports nothing but itself and the wire views (src/sdk/wire.ts, a leaf of types that imports nothing)', () => {
  assert.deepEqual(crossings('domain', /^(?!domain\/|sdk\/wire\.ts$)/), []);
  assert.deepEqual(imports(join(SRC, 'sdk/wire.ts')), []);
  assert.doesNotMatch(readFileSync(join(SRC, 'sdk/wire.ts'), 'utf8'), /^(?!\s*(\/\/|\/\*|\*|export (interface|type) |$)).*\b(function|const|let|class)\b/m, 'types only');
});

test('src/chains is data: it imports only the domain, never a chain family', () => {
  assert.deepEqual(crossings('chains', /^(?!chains\/|domain\/)/), []);
});

const PROCESSES = 'app|http|daemon|metrics|webhooks|indexer|sweep|report|cli';

test('a chain family imports no store, no use case and no process', () => {
  assert.deepEqual(crossings('families', new RegExp(`^(store|${PROCESSES})/`)), []);
});

test('only src/cli imports src/cli, and only src/cli imports src/daemon', () => {
  const offending = sources(SRC)
    .filter((f) => !relative(SRC, f).startsWith('cli/') && !f.endsWith('.test.ts'))
    .flatMap((f) =>
      imports(f)
        .filter((target) => /^(cli|daemon)\//.test(relative(SRC, target)) && !relative(SRC, target).startsWith(relative(SRC, f).split('/')[0]!))
        .map((target) => `${relative(SRC, f)} -> ${relative(SRC, target)}`),
    );
  assert.deepEqual(offending, []);
});

test('src/store and src/config import nothing from the layers above them; src/config nothing from the store', () => {
  assert.deepEqual([...crossings('store', new RegExp(`^(families|${PROCESSES})/`)), ...crossings('config', new RegExp(`^(store|families|${PROCESSES})/`))], []);
});

test('use cases, webhooks, indexer, sweeps and reports import no route, no process and no command', () => {
  for (const folder of ['app', 'webhooks', 'indexer', 'sweep', 'report']) assert.deepEqual(crossings(folder, /^(http|daemon|metrics|cli)\//), [], folder);
});

/** The chain clients and key libraries of the families: only src/families (and the offline tools that sign) load them. */
const CHAIN_LIBRARY = /^(ethers|bitcoinjs-lib|bip32|ecpair|tronweb|@bitcoinerlab\/|@solana\/|@solana-program\/|@ton\/)/;

/** Every package a file names: static imports and re-exports, dynamic import() and require(). */
function packagesNamed(text: string): string[] {
  return [...text.matchAll(/(?:^(?:import|export)[^'"]*from\s+|\bimport\(\s*|\brequire\(\s*)'([^'./][^']*)'/gm)].map((m) => m[1]!);
}

test('use cases load no chain library: they read the chain through a family (e.g. /confirm through ChainSource.receipt)', () => {
  const offending = sources(join(SRC, 'app'))
    .filter((f) => !f.endsWith('.test.ts'))
    .flatMap((f) => packagesNamed(readFileSync(f, 'utf8')).filter((p) => CHAIN_LIBRARY.test(p)).map((p) => `${relative(SRC, f)} -> ${p}`));
  assert.deepEqual(offending, []);
  // The check itself finds each way of loading one.
  assert.deepEqual(packagesNamed("import { getAddress } from 'ethers';\nconst m = await import('@ton/core');\nrequire('bitcoinjs-lib');\nimport { z } from 'zod';\nimport x from './x.ts';"), ['ethers', '@ton/core', 'bitcoinjs-lib', 'zod']);
});

test('chain facts have one writer: only the ledger (src/indexer/ledger.ts) records or un-credits a transfer', () => {
  const writers = sources(SRC)
    .filter((f) => !f.endsWith('.test.ts') && relative(SRC, f) !== 'store/lifecycle.ts')
    .filter((f) => /\b(recordTransfer|markReorged)\b/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(SRC, f));
  assert.deepEqual(writers, ['indexer/ledger.ts']);
});

test('routes import nothing from the store, types included: they call use cases in src/app', () => {
  assert.deepEqual(crossings('http', /^store\//), []);
});

test('routes import no SDK module: the merchant SDK is a client of the server, not a part of it', () => {
  assert.deepEqual(crossings('http', /^sdk\//), []);
});

test('routes authenticate through one use case; only an authentication scheme reads the key cache', () => {
  const readers = sources(SRC)
    .filter((f) => !f.endsWith('.test.ts') && imports(f).some((t) => relative(SRC, t) === 'store/merchant-keys.ts'))
    .map((f) => relative(SRC, f));
  assert.deepEqual(readers, ['app/signed-request-scheme.ts']);
  assert.deepEqual(crossings('http', /^app\/(signed-request-scheme|auth-scheme)\.ts$/), []);
});

test('dashboard routes reach the data only through use cases: no store, webhooks, config or other surface', () => {
  // Their one credential is the session (src/app/dashboard-session.ts); they never read the gateway's keys.
  assert.deepEqual(crossings('http/dashboard', /^(store|webhooks|config|indexer|sweep|report|sdk|families|http\/(gateway|checkout|page))\//), []);
  assert.ok(sources(join(SRC, 'http/dashboard')).some((f) => imports(f).some((t) => relative(SRC, t).startsWith('app/dashboard-'))), 'they call the dashboard use cases');
});

test('the entities stay inside src/store: no other file imports them, types included', () => {
  const offending = sources(SRC)
    .filter((f) => !relative(SRC, f).startsWith('store/') && !f.endsWith('.test.ts'))
    .flatMap((f) => imports(f).filter((target) => relative(SRC, target).startsWith('store/entities/')).map((target) => `${relative(SRC, f)} -> ${relative(SRC, target)}`));
  assert.deepEqual(offending, []);
});

test('every read returns plain records: only the ORM setup imports an entity, and no code calls an ORM finder', () => {
  const importers = sources(SRC)
    .filter((f) => !f.endsWith('.test.ts') && !relative(SRC, f).startsWith('store/entities/'))
    .filter((f) => imports(f).some((t) => relative(SRC, t).startsWith('store/entities/')))
    .map((f) => relative(SRC, f));
  assert.deepEqual(importers, ['store/orm.ts']);
  const finders = sources(SRC)
    .filter((f) => !f.endsWith('.test.ts'))
    .flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\.(find|findOne|findOneOrFail|findAndCount|findAll|count)\(\s*[A-Z]\w*\s*,/g)].map((m) => `${relative(SRC, f)}: ${m[1]}`));
  assert.deepEqual(finders, []);
});

/** Where a file decides by the database's dialect: `dialect === 'postgresql'`, `.dialect !== …`, `=== 'sqlite'`. */
function dialectBranches(text: string): string[] {
  return [...text.matchAll(/\bdialect\w*\s*[!=]==|[!=]==\s*'(?:postgresql|sqlite)'|'(?:postgresql|sqlite)'\s*[!=]==/g)].map((m) => m[0]);
}

test('the serving layers never branch on the dialect: the store chooses (e.g. the rate-limit counters, src/store/rate-limit-store.ts)', () => {
  const offending = sources(SRC)
    .filter((f) => !f.endsWith('.test.ts') && new RegExp(`^(${PROCESSES.replace('|cli', '')}|domain|chains|families)/`).test(relative(SRC, f)))
    .flatMap((f) => dialectBranches(readFileSync(f, 'utf8')).map((b) => `${relative(SRC, f)}: ${b}`));
  assert.deepEqual(offending, []);
  assert.equal(dialectBranches("const counters = db.dialect === 'postgresql' ? a : b;").length, 1);
  assert.equal(dialectBranches("if (dialectOf(url) === 'sqlite') x();").length, 1);
  assert.equal(dialectBranches("const dialect = db.dialect;").length, 0);
});

/** Static imports and lazy `import('./…')` alike: a lazy import still ties the two files together. */
function allImports(file: string): string[] {
  const lazy = [...readFileSync(file, 'utf8').matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)].map((m) => join(file, '..', m[1]!));
  return [...imports(file), ...lazy];
}

/** Groups of files that reach each other through their imports (Tarjan's strongly connected components). */
function circles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, allImports(f).filter((t) => graphHas(t))]));
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

test('no import circles, lazy imports included', () => {
  assert.deepEqual(circles(sources(SRC).filter((f) => !f.endsWith('.test.ts'))), []);
});

/** The arguments of each call of `name(` in `text`, split at their top level. */
function callArguments(text: string, name: string): string[][] {
  const calls: string[][] = [];
  for (let at = text.indexOf(`${name}(`); at !== -1; at = text.indexOf(`${name}(`, at + 1)) {
    const args: string[] = [];
    let depth = 0;
    let start = at + name.length + 1;
    for (let i = start; i < text.length; i++) {
      const c = text[i]!;
      if ('([{'.includes(c)) depth++;
      else if (')]}'.includes(c)) {
        if (depth === 0) {
          args.push(text.slice(start, i));
          break;
        }
        depth--;
      } else if (c === ',' && depth === 0) {
        args.push(text.slice(start, i));
        start = i + 1;
      }
    }
    calls.push(args);
  }
  return calls;
}

/** Where a file writes a status or state column: SQL `update … set status =`, an ORM nativeUpdate setting one, an entity's `.status =`. */
function statusWrites(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/update\s+(\w+)\s+set\s+([\s\S]*?)(?:\bwhere\b|`|$)/gi)) {
    if (/\b(status|state)\s*=/.test(m[2]!)) found.push(`SQL update of ${m[1]}`);
  }
  for (const args of callArguments(text, 'nativeUpdate')) {
    if (args[2] !== undefined && /\b(status|state)\s*:/.test(args[2])) found.push(`nativeUpdate(${args[0]!.trim()}, …)`);
  }
  // A JavaScript assignment statement (ends its line with `;`), not an SQL alias compared in a WHERE clause.
  for (const m of text.matchAll(/\b(\w+)\.(status|state)\s*=(?!=)[^\n`]*;\s*$/gm)) {
    if (m[1] !== 'this' && m[1] !== 'where') found.push(`${m[1]}.${m[2]} =`);
  }
  return found;
}

test('only src/store/lifecycle.ts writes a status (payments, invoices, pool, transfers, deliveries, keys, sweeps)', () => {
  const offending = sources(SRC)
    .filter((f) => !f.endsWith('.test.ts') && relative(SRC, f) !== 'store/lifecycle.ts')
    .flatMap((f) => statusWrites(readFileSync(f, 'utf8')).map((w) => `${relative(SRC, f)}: ${w}`));
  assert.deepEqual(offending, []);
  // The check itself finds each kind of write.
  assert.equal(statusWrites("`update invoice set status = 'PAID' where id = ?`").length, 1);
  assert.equal(statusWrites("`update payment set confirmations = ? where status = 'PENDING'`").length, 0);
  assert.equal(statusWrites("em.nativeUpdate(Payment, { id, status: 'PENDING' }, { status: 'FAILED' })").length, 1);
  assert.equal(statusWrites("em.nativeUpdate(Payment, { id, status: 'PENDING' }, { confirmations: 2 })").length, 0);
  assert.equal(statusWrites("t.status = 'REORGED';").length, 1);
  assert.equal(statusWrites("`select 1 from payment p where p.status = 'PENDING'\n  and p.id = ?`").length, 0);
});

/** Every entity (src/store/entities): the store writes all its tables in SQL through Database.write; MikroORM keeps the schema, the migrations and some reads. */
const SQL_ONLY_ENTITIES = sources(join(SRC, 'store', 'entities')).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/^export class (\w+)/gm)].map((m) => m[1]!));

/** Where a file writes one of those tables through the ORM: em.create/insert/nativeUpdate/nativeDelete of its entity, or any persist/assign/flush beside it. */
function ormWrites(text: string): string[] {
  const found: string[] = [];
  for (const name of ['create', 'insert', 'insertMany', 'upsert', 'upsertMany', 'nativeUpdate', 'nativeDelete']) {
    for (const args of callArguments(text, `.${name}`)) {
      const entity = args[0]?.trim();
      if (entity && SQL_ONLY_ENTITIES.includes(entity)) found.push(`${name}(${entity}, …)`);
    }
  }
  // Entities of those tables loaded and changed in memory are written by a flush (or persist/assign).
  const uses = SQL_ONLY_ENTITIES.filter((e) => new RegExp(`\\b${e}\\b`).test(text.replace(/^import .*$/gm, '')) && new RegExp(`^import .*\\b${e}\\b.*entities/`, 'm').test(text));
  if (uses.length > 0) for (const call of ['.persist(', '.assign(', '.flush(']) if (text.includes(call)) found.push(`${call.slice(1, -1)}() beside ${uses.join(', ')}`);
  return found;
}

test('the ORM writes no table: every write is SQL through Database.write', () => {
  assert.ok(SQL_ONLY_ENTITIES.includes('MerchantPoint') && SQL_ONLY_ENTITIES.length >= 14, SQL_ONLY_ENTITIES.join());
  const offending = sources(SRC)
    .filter((f) => !f.endsWith('.test.ts') && !relative(SRC, f).startsWith('store/entities/'))
    .flatMap((f) => ormWrites(readFileSync(f, 'utf8')).map((w) => `${relative(SRC, f)}: ${w}`));
  assert.deepEqual(offending, []);
  // The check itself finds each kind of write.
  const imported = "import { Payment } from './entities/payment.entity.ts';\n";
  assert.equal(ormWrites("em.create(WebhookEvent, { id })").length, 1);
  assert.equal(ormWrites("em.nativeUpdate(Payment, { id }, { confirmations: 2 })").length, 1);
  assert.equal(ormWrites("tem.nativeDelete(ObservedTransfer, { id })").length, 1);
  assert.equal(ormWrites(`${imported}const p = await em.findOneOrFail(Payment, { id });\np.receivedAmount = '1';\nawait em.flush();`).length, 1);
  assert.equal(ormWrites(`${imported}const p = await em.findOneOrFail(Payment, { id });`).length, 0);
  assert.equal(ormWrites("em.create(MerchantPoint, { id }); await em.flush();").length, 1);
  assert.equal(ormWrites("em.find(MerchantPoint, {});").length, 0);
});
