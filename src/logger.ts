import { pino, type Logger } from 'pino';

/** Structured logs on stderr (stdout is kept for command output such as --json). Secrets are redacted. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      redact: {
        paths: ['apiSecret', '*.apiSecret', 'masterKey', '*.masterKey', 'apiKey', '*.apiKey', 'req.headers["x-api-key"]', 'req.headers["x-signature"]', 'req.headers.authorization'],
        censor: '[redacted]',
      },
    },
    pino.destination(2),
  );
}

export type { Logger };
