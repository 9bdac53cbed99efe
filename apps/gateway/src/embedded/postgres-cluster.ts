import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CalgateError } from '@calgate/core';
import {
  childEnv,
  isCode,
  type PostgresBinaries,
  type PostgresLog,
  type RunAs,
  SUPERUSER,
} from './postgres-binaries.ts';

const run = promisify(execFile);

/** Postgres refuses to run as root; as root it runs as the `postgres` system user, created if missing. */
export async function postgresUser(log: PostgresLog): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) {
    return undefined;
  }
  const lookup = async (): Promise<RunAs> => ({
    uid: Number((await run('id', ['-u', SUPERUSER])).stdout.trim()),
    gid: Number((await run('id', ['-g', SUPERUSER])).stdout.trim()),
  });
  try {
    return await lookup();
  } catch {
    log.warn('running as root: creating the system user "postgres" to run the embedded PostgreSQL');
    await run('groupadd', ['--system', SUPERUSER]).catch(() => undefined);
    await run('useradd', [
      '--system',
      '--gid',
      SUPERUSER,
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      SUPERUSER,
    ]);
    return lookup();
  }
}

/** The `postgres` user must traverse DATA_DIR; it lists nothing there (files stay 0600). */
export async function makeReachable(dataDir: string): Promise<void> {
  const { mode } = await stat(dataDir);
  if ((mode & 0o001) === 0) {
    await chmod(dataDir, (mode & 0o7777) | 0o001);
  }
}

export async function assertUsable(binaries: PostgresBinaries, dataDir: string, user: RunAs): Promise<void> {
  const reach = async (file: string, args: string[]) =>
    run(file, args, { uid: user.uid, gid: user.gid, env: childEnv(binaries) }).then(
      () => true,
      () => false,
    );
  const problem = !(await reach(binaries.postgres, ['--version']))
    ? `cannot run ${binaries.postgres}`
    : !(await reach('test', ['-x', dataDir]))
      ? `cannot reach ${dataDir}`
      : undefined;
  if (problem) {
    throw new CalgateError(
      'unavailable',
      `Running as root, the embedded PostgreSQL runs as the "postgres" user, which ${problem} ` +
        '(a parent directory is probably private, like /root). Run Calgate as a normal user, ' +
        'put the project and DATA_DIR where other users can reach them, or set DATABASE_URL.',
    );
  }
}

/** Returns the superuser password; initialises the cluster on the first start only. */
export async function ensureCluster(
  clusterDir: string,
  passwordFile: string,
  binaries: PostgresBinaries,
  runAs: RunAs | undefined,
  log: PostgresLog,
): Promise<string> {
  if (await isCluster(clusterDir)) {
    const password = await readPassword(passwordFile);
    if (password === undefined) {
      throw new CalgateError(
        'unavailable',
        `The embedded PostgreSQL cluster in ${clusterDir} exists but ${passwordFile} is missing, so Calgate ` +
          'cannot log in. Restore the file, or move the cluster away to start afresh.',
      );
    }
    return password;
  }
  if ((await readdir(clusterDir).catch(() => [])).length > 0) {
    throw new CalgateError(
      'unavailable',
      `${clusterDir} is not empty but holds no PostgreSQL cluster; move it away and start again.`,
    );
  }
  await rmdir(clusterDir).catch(() => undefined);
  // Kept if an earlier first start died after writing it: the cluster did not exist yet either way.
  const password = (await readPassword(passwordFile)) ?? (await createPassword(passwordFile));
  log.info({ dir: clusterDir }, 'initialising the embedded PostgreSQL cluster (first start)');
  // initdb works in a staging directory renamed into place, so a half-made cluster is never
  // mistaken for a real one on the next start.
  const staging = `${clusterDir}.init`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { mode: 0o700 });
  if (runAs) {
    await chown(staging, runAs.uid, runAs.gid);
  }
  await initdb(binaries, staging, password, runAs);
  await rename(staging, clusterDir);
  return password;
}

async function isCluster(dir: string): Promise<boolean> {
  return stat(join(dir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
}

async function readPassword(file: string): Promise<string | undefined> {
  try {
    const { mode } = await stat(file);
    if ((mode & 0o077) !== 0) {
      await chmod(file, 0o600);
    }
    const password = (await readFile(file, 'utf8')).trim();
    return password === '' ? undefined : password;
  } catch (error) {
    if (isCode(error, 'ENOENT')) {
      return undefined;
    }
    throw error;
  }
}

async function createPassword(file: string): Promise<string> {
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
  return password;
}

async function initdb(binaries: PostgresBinaries, dir: string, password: string, runAs: RunAs | undefined) {
  // initdb reads the password from a file; a private directory keeps it from other users.
  const secretDir = await mkdtemp(join(tmpdir(), 'calgate-initdb-'));
  const pwfile = join(secretDir, 'pw');
  try {
    await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
    if (runAs) {
      await chown(secretDir, runAs.uid, runAs.gid);
      await chown(pwfile, runAs.uid, runAs.gid);
    }
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        binaries.initdb,
        [
          `--pgdata=${dir}`,
          `--username=${SUPERUSER}`,
          '--auth=scram-sha-256',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--no-locale',
          '--no-instructions',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv(binaries), ...runAs },
      );
      let output = '';
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
      child.once('error', reject);
      child.once('exit', (code) => {
        if (code === 0) {
          resolve();
        } else {
          reject(new CalgateError('unavailable', `initdb failed (exit ${code}):\n${output.trim()}`));
        }
      });
    });
  } finally {
    await rm(secretDir, { recursive: true, force: true });
  }
}
