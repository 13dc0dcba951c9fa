import type { ChildProcess } from 'node:child_process';

// Child processes the tests spawn (indexers, serve) die with the test process, through one exit
// hook for all of them.
const children = new Set<ChildProcess>();
let hooked = false;

export function trackChild(child: ChildProcess): void {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of children) c.kill('SIGKILL');
    });
  }
}
