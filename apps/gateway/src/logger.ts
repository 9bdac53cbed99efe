import type { FastifyBaseLogger } from 'fastify';
import { type Bindings, type ChildLoggerOptions, type Logger, pino } from 'pino';

/** Paths that may hold secrets anywhere in a log line; pino replaces them before writing. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.apiKey',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.access_token',
  '*.refresh_token',
  '*.clientSecret',
  '*.credentials',
  '*.encryptionKey',
  'config.encryptionKey',
  'config.previousEncryptionKeys',
  'config.google.clientSecret',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: 'calgate' },
  };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<FastifyBaseLogger['info']>;
/** A logger that can say whether a level is on (pino's can). */
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger that becomes the parent's child (with the request id) only when something at
 * an enabled level is logged: Fastify makes one per request, and pino's child (its bindings, their
 * redaction, a new prototype) is work that most requests never use.
 */
class RequestLogger implements FastifyBaseLogger {
  readonly #parent: LevelAware;
  readonly #bindings: Bindings;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: LevelAware, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  get #log(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings);
    return this.#child;
  }

  #write(level: Level, args: LogArgs): void {
    if (this.#child !== undefined || this.#parent.isLevelEnabled(level)) {
      (this.#log[level] as (...args: LogArgs) => void)(...args);
    }
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#log.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }

  silent(): void {}

  fatal(...args: LogArgs): void {
    this.#write('fatal', args);
  }

  error(...args: LogArgs): void {
    this.#write('error', args);
  }

  warn(...args: LogArgs): void {
    this.#write('warn', args);
  }

  info(...args: LogArgs): void {
    this.#write('info', args);
  }

  debug(...args: LogArgs): void {
    this.#write('debug', args);
  }

  trace(...args: LogArgs): void {
    this.#write('trace', args);
  }
}

/**
 * Fastify's childLoggerFactory: a {@link RequestLogger}, or the parent's own child when the route
 * asks for options of its own (a log level, serializers) or the parent cannot say which levels are on.
 */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const parent = logger as Partial<LevelAware>;
  if (Object.keys(options).length > 0 || typeof parent.isLevelEnabled !== 'function') {
    return logger.child(bindings, options);
  }
  return new RequestLogger(logger as LevelAware, bindings);
}
