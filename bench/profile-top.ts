// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by package, top N.
//   node --import tsx bench/profile-top.ts <file.cpuprofile> [N] [from]
// `from` (0–1) skips that share of the sampled time: 0.8 keeps the last fifth (the bench's last route).
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const [file, n = '25', from = '0'] = process.argv.slice(2) as [string, string?, string?];
const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(prof.nodes.map((node) => [node.id, node]));
const self = new Map<number, number>();
const span = prof.timeDeltas.reduce((a, b) => a + b, 0);
let at = 0;
prof.samples.forEach((id, i) => {
  at += prof.timeDeltas[i] ?? 0;
  if (at >= Number(from) * span) self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const fn = new Map<string, number>();
const pkg = new Map<string, number>();
for (const [id, us] of self) {
  const f = byId.get(id)!.callFrame;
  const where = f.url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, '~');
  fn.set(`${f.functionName || '(anonymous)'}  ${where}:${f.lineNumber + 1}`, (fn.get(`${f.functionName || '(anonymous)'}  ${where}:${f.lineNumber + 1}`) ?? 0) + us);
  const p = f.url === '' ? `(${f.functionName || 'native'})` : /node_modules\/((@[^/]+\/)?[^/]+)/.exec(f.url)?.[1] ?? (f.url.startsWith('node:') ? 'node:internal' : f.url.includes('/dist/') ? 'chaingate' : f.url);
  pkg.set(p, (pkg.get(p) ?? 0) + us);
}
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled)`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
};
show('self time by package', pkg);
show('self time by function', fn);
