import { type Logger, pino } from 'pino';

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
