import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './cli.ts';
import { trackChild } from './children.ts';

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<number | string>;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Starts the real `bin/chaingate serve` on a free port and waits for its "listening" line. */
export async function spawnServe(env: Record<string, string>, options: { nodeArgs?: string[] } = {}): Promise<ServeProcess> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_')) base[k] = v;
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, 'serve'], { env: { ...base, CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0', CHAINGATE_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  let out = '';
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 60_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /\{"listening":"([^"]+)"\}/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
