import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilentOrString, LogFn } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type PinoLike = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * `req.log`, made only when something is written. Fastify gives every request a child logger
 * carrying its id; pino builds it (bindings serialised, redaction set up) whether or not the request
 * ever logs, which was 2–3 µs of a buyer poll (docs/performance.md). This one holds the parent and
 * the bindings and makes the pino child on the first line at an enabled level, on `child()`, or
 * when its level is set; a line at a disabled level stays a no-op, as it is in pino.
 */
class RequestLogger {
  #real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: PinoLike,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.#real ??= this.parent.child(this.bindings, this.options));
  }

  private write(level: Level, args: Parameters<LogFn>): void {
    const real = this.#real;
    if (real) real[level](...args);
    else if (this.parent.isLevelEnabled(level)) this.real()[level](...args);
  }

  get level(): LevelWithSilentOrString {
    return (this.#real ?? this.parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.real().level = level;
  }

  // Methods on the prototype: a request's logger allocates no closures.
  fatal(...args: Parameters<LogFn>): void {
    this.write('fatal', args);
  }
  error(...args: Parameters<LogFn>): void {
    this.write('error', args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.write('warn', args);
  }
  info(...args: Parameters<LogFn>): void {
    this.write('info', args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.write('debug', args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: a RequestLogger when a level is inherited, else pino's own child. */
export const requestLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  // A route-level level or serializers need pino's child at once (none of our routes set them).
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new RequestLogger(logger as PinoLike, bindings, options) as unknown as FastifyBaseLogger;
};
