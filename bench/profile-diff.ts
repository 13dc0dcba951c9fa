// Where one server spends more CPU per request than another: two V8 .cpuprofiles (node --cpu-prof)
// of the same load, each with the CPU µs per request the bench printed for it, give each function's
// self time in µs per request and the difference, largest first.
//   node --import tsx bench/profile-diff.ts <base.cpuprofile> <base µs/req> <other.cpuprofile> <other µs/req> [N] [lastSeconds]
// Idle samples are left out and the busy ones scaled to the µs per request; `lastSeconds` keeps only
// the end of each profile (npm run bench -- --profile: the measured route is the last one run).
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time of each function (and each package) in µs per request. */
function perRequest(file: string, usPerRequest: number, lastSeconds: number): { fn: Map<string, number>; pkg: Map<string, number> } {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(prof.nodes.map((node) => [node.id, node]));
  const span = prof.timeDeltas.reduce((a, b) => a + b, 0);
  const from = span - lastSeconds * 1e6;
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let at = 0;
  let busy = 0;
  prof.samples.forEach((id, i) => {
    const us = prof.timeDeltas[i] ?? 0;
    at += us;
    const f = byId.get(id)!.callFrame;
    if (at < from || f.functionName === '(idle)') return;
    busy += us;
    const where = f.url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '~').replace(/^.*\/dist\//, '');
    const name = `${f.functionName || '(anonymous)'}  ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    const p = f.url === '' ? `(${f.functionName || 'native'})` : /node_modules\/((@[^/]+\/)?[^/]+)/.exec(f.url)?.[1] ?? (f.url.startsWith('node:') ? 'node:internal' : 'chaingate');
    pkg.set(p, (pkg.get(p) ?? 0) + us);
  });
  for (const m of [fn, pkg]) for (const [k, us] of m) m.set(k, (us / busy) * usPerRequest);
  return { fn, pkg };
}

const [baseFile, baseUs, otherFile, otherUs, n = '30', last = '1e9'] = process.argv.slice(2) as [string, string, string, string, string?, string?];
const base = perRequest(baseFile, Number(baseUs), Number(last));
const other = perRequest(otherFile, Number(otherUs), Number(last));
const show = (title: string, a: Map<string, number>, b: Map<string, number>) => {
  const keys = new Set([...a.keys(), ...b.keys()]);
  const rows = [...keys].map((k) => ({ k, a: a.get(k) ?? 0, b: b.get(k) ?? 0 })).sort((x, y) => Math.abs(y.b - y.a) - Math.abs(x.b - x.a));
  console.log(`\n${title}: µs per request, base → other (difference)`);
  for (const r of rows.slice(0, Number(n))) console.log(`${r.a.toFixed(1).padStart(6)} → ${r.b.toFixed(1).padStart(6)} (${(r.b - r.a >= 0 ? '+' : '') + (r.b - r.a).toFixed(1)})  ${r.k.slice(0, 140)}`);
};
show('self time by package', base.pkg, other.pkg);
show('self time by function', base.fn, other.fn);
