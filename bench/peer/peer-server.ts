/**
 * The best open peer, `@cocal/google-calendar-mcp` (a devDependency, pinned), in its HTTP mode
 * against the emulator: an OAuth client file and a token file as its own setup would write them,
 * and the google-root.ts preload for Google's address (see there). Nothing is installed at run
 * time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@calgate/testkit';
import { ACCOUNT, type EmulatorProcess, OAUTH_CLIENT } from './emulator.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface PeerServer {
  /** Its MCP endpoint. */
  url: string;
  pid: number;
  version: string;
  stop(): Promise<void>;
}

export async function startPeer(emulator: EmulatorProcess): Promise<PeerServer> {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@cocal/google-calendar-mcp/package.json');
  const { version, bin } = require(manifest) as { version: string; bin: Record<string, string> };
  const entry = join(manifest, '..', Object.values(bin)[0] ?? 'build/index.js');
  const dir = await mkdtemp(join(tmpdir(), 'calgate-peer-'));
  const credentials = join(dir, 'gcp-oauth.keys.json');
  const tokenFile = join(dir, 'tokens.json');
  await writeFile(
    credentials,
    JSON.stringify({
      installed: {
        client_id: OAUTH_CLIENT.clientId,
        client_secret: OAUTH_CLIENT.clientSecret,
        redirect_uris: ['http://127.0.0.1/oauth2callback'],
      },
    }),
  );
  const tokens = await emulator.issueTokens();
  // Its multi-account token file; the cached address spares it a tokeninfo call to Google.
  await writeFile(
    tokenFile,
    JSON.stringify({
      normal: {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        scope: tokens.scope,
        token_type: 'Bearer',
        expiry_date: Date.now() + tokens.expires_in * 1000,
        cached_email: ACCOUNT,
      },
    }),
    { mode: 0o600 },
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', join(root, 'bench/peer/google-root.ts'), entry],
    {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        TRANSPORT: 'http',
        PORT: String(port),
        HOST: '127.0.0.1',
        GOOGLE_OAUTH_CREDENTIALS: credentials,
        GOOGLE_CALENDAR_MCP_TOKEN_PATH: tokenFile,
        PEER_GOOGLE_ROOT_URL: `${emulator.url}/`,
        PEER_ENTRY: entry,
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (log.includes('listening on')) {
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`the peer exited (${code}) before listening:\n${log}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid ?? 0,
    version,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
