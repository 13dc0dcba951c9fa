import { writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';
import { createUrlScrubber } from './domain/http-url.ts';

/** json: one JSON object a line; pretty: `HH:MM:SS LEVEL msg key=value`; auto: pretty on a terminal. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * Structured logs on stderr (stdout is kept for command output such as --json). Secrets are
 * redacted. JSON lines when stderr is piped or redirected (log collectors, tests), readable lines
 * when a person watches a terminal, unless `format` (log.format, CHAINGATE_LOG_FORMAT) says which.
 * Every line is scrubbed of endpoint credentials: a URL with user info, or at one of `endpoints`
 * (the configured RPC and API URLs), is written as scheme://host[:port], whichever field or error
 * message quotes it, and those URLs' passwords and keys are blanked wherever they appear.
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, format: LogFormat = 'auto', endpoints: readonly string[] = []): Logger {
  const pretty = format === 'pretty' || (format === 'auto' && process.stderr.isTTY === true);
  const scrub = createUrlScrubber(endpoints);
  return pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      redact: {
        paths: ['apiSecret', '*.apiSecret', 'masterKey', '*.masterKey', 'apiKey', '*.apiKey', 'req.headers["x-api-key"]', 'req.headers["x-signature"]', 'req.headers.authorization'],
        censor: '[redacted]',
      },
    },
    pretty ? prettyStream(process.stderr.isTTY === true && !process.env.NO_COLOR, scrub) : scrubbedStream(pino.destination(2), scrub),
  );
}

const LEVELS: Record<number, [name: string, color: string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '90'],
  30: ['INFO', '32'],
  40: ['WARN', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
};

/**
 * Left out of readable lines: what every line carries (a person watching one process needs it once),
 * and fields that only restate the message for machines (serve's start-up offer summary).
 */
const QUIET = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'process', 'offered', 'notOffered']);

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' && /^[^\s",=]+$/.test(x))) return v.join(',');
  return JSON.stringify(v) ?? String(v);
}

/** One pino JSON record as `HH:MM:SS LEVEL msg key=value…` (an error's stack indented below it). */
export function prettyLine(line: string, color = false): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const level = typeof rec.level === 'number' ? rec.level : 30;
  const [name, code] = LEVELS[level] ?? [String(rec.level), '0'];
  const time = new Date(typeof rec.time === 'number' ? rec.time : Date.now());
  const hms = [time.getHours(), time.getMinutes(), time.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  const label = color ? `\u001b[${code}m${name.padEnd(5)}\u001b[0m` : name.padEnd(5);
  const parts = [hms, label, typeof rec.msg === 'string' ? rec.msg : ''];
  let stack = '';
  for (const [k, v] of Object.entries(rec)) {
    if (QUIET.has(k) || v === undefined) continue;
    if (k === 'err' && v && typeof v === 'object') {
      const err = v as { message?: string; stack?: string };
      parts.push(`err=${value(err.message ?? '')}`);
      if (level >= 50 && err.stack) stack = `\n${err.stack.split('\n').map((s) => `    ${s.trim()}`).join('\n')}`;
      continue;
    }
    parts.push(`${k}=${value(v)}`);
  }
  return `${parts.filter((p) => p !== '').join(' ')}${stack}\n`;
}

/** Written synchronously, as pino.destination(2) is, so nothing is lost when the process exits. */
function prettyStream(color: boolean, scrub: (text: string) => string): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line) writeSync(2, prettyLine(scrub(line), color));
    },
  };
}

type Flushable = DestinationStream & { flush?: (cb?: (err?: Error) => void) => void; flushSync?: () => void };

/** The JSON lines through `scrub` on their way to `dest`, which keeps its own flushing on exit. */
function scrubbedStream(dest: Flushable, scrub: (text: string) => string): Flushable {
  return {
    write: (chunk: string) => dest.write(scrub(chunk)),
    flush: (cb) => (dest.flush ? dest.flush(cb) : cb?.()),
    flushSync: () => dest.flushSync?.(),
  };
}

export type { Logger };
