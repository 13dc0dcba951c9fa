import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// The fenced examples of README.md and docs/*.md. A block of a runnable language (sh, yaml, json,
// js, ts) is either run by test/integration/docs-examples.test.ts or preceded by an HTML comment
// `<!-- not run: why -->` (docker, systemd, a public RPC, a placeholder the reader fills in, or a
// fragment). Blocks without a language are output, diagrams or synopses, and are not run.

export const RUNNABLE_LANGS = new Set(['sh', 'bash', 'yaml', 'json', 'js', 'ts']);

export interface DocBlock {
  /** Path relative to the repository root, e.g. docs/api.md. */
  file: string;
  /** Line of the opening fence (1-based). */
  line: number;
  lang: string;
  body: string;
  /** The reason of a `<!-- not run: … -->` right before the block, or null. */
  notRun: string | null;
}

export function docFiles(root: string): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
}

export function docBlocks(root: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  for (const file of docFiles(root)) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\w*)\s*$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
      if (end < 0) throw new Error(`${file}:${i + 1}: unterminated code block`);
      let k = i - 1;
      while (k >= 0 && lines[k]!.trim() === '') k--;
      const marker = k >= 0 ? /^<!--\s*not run:\s*(.+?)\s*-->$/.exec(lines[k]!.trim()) : null;
      blocks.push({ file, line: i + 1, lang: open[1]!, body: lines.slice(i + 1, end).join('\n'), notRun: marker?.[1] ?? null });
      i = end;
    }
  }
  return blocks;
}

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a shell example with bash -e in `cwd`, in a process group of its own that is killed when the
 * script ends (so `chaingate serve &` does not outlive it). `chaingate` is on PATH (shimDir).
 */
export function runShell(script: string, options: { cwd: string; env: Record<string, string>; stdin?: string; timeoutMs?: number }): Promise<ScriptRun> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-c', script], { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdin.end(options.stdin ?? '');
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(killGroup, options.timeoutMs ?? 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      killGroup();
      resolve({ code, stdout, stderr });
    });
  });
}
