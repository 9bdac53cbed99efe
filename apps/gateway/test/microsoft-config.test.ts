import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

/** Settings loadConfig needs besides the ones under test. */
const BASE_ENV = { DATABASE_URL: 'postgres://calgate@127.0.0.1:5432/calgate' };

describe('Microsoft settings', () => {
  it("default to Microsoft's own endpoints and the common tenant, with Microsoft connect off", () => {
    const { microsoft } = loadConfig(BASE_ENV);
    expect(microsoft).toEqual({
      clientId: undefined,
      clientSecret: undefined,
      tenant: 'common',
      graphUrl: 'https://graph.microsoft.com/v1.0',
      loginUrl: 'https://login.microsoftonline.com',
      tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
    });
  });

  it('read the client, the tenant and the emulator URLs; a trailing slash is dropped, the version kept', () => {
    const { microsoft } = loadConfig({
      ...BASE_ENV,
      MICROSOFT_CLIENT_ID: '00000000-0000-0000-0000-000000000001',
      MICROSOFT_CLIENT_SECRET: 'secret-value',
      MICROSOFT_TENANT: 'contoso.onmicrosoft.com',
      MICROSOFT_GRAPH_URL: 'http://127.0.0.1:8901/v1.0/',
      MICROSOFT_LOGIN_URL: 'http://127.0.0.1:8901/login//',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    expect(microsoft.clientId).toBe('00000000-0000-0000-0000-000000000001');
    expect(microsoft.clientSecret).toBe('secret-value');
    expect(microsoft.tenant).toBe('contoso.onmicrosoft.com');
    expect(microsoft.graphUrl).toBe('http://127.0.0.1:8901/v1.0');
    expect(microsoft.loginUrl).toBe('http://127.0.0.1:8901/login');
    expect(microsoft.tokenUrl).toBe('http://127.0.0.1:8901/login/contoso.onmicrosoft.com/oauth2/v2.0/token');
  });

  it('refuse a Graph or login URL that is not http(s), and a tenant that is not a name', () => {
    for (const [name, value] of [
      ['MICROSOFT_GRAPH_URL', 'graph.microsoft.com/v1.0'],
      ['MICROSOFT_GRAPH_URL', 'ftp://graph.example/v1.0'],
      ['MICROSOFT_LOGIN_URL', 'not a url'],
      ['MICROSOFT_TENANT', 'common/../evil'],
      ['MICROSOFT_TENANT', 'a b'],
    ] as const) {
      expect(() => loadConfig({ ...BASE_ENV, [name]: value }), `${name}=${value}`).toThrow(ConfigError);
      expect(() => loadConfig({ ...BASE_ENV, [name]: value }), `${name}=${value}`).toThrow(new RegExp(name));
    }
  });
});

describe('API roots on loopback or private addresses (the emulators) need OUTBOUND_ALLOW_PRIVATE=true', () => {
  const ROOTS = {
    GOOGLE_API_ROOT_URL: 'http://127.0.0.1:8900/',
    GOOGLE_OAUTH_URL: 'http://127.0.0.1:8900',
    MICROSOFT_GRAPH_URL: 'http://127.0.0.1:8901/v1.0',
    MICROSOFT_LOGIN_URL: 'http://127.0.0.1:8901',
  };

  it('refuses each at start, naming the setting, without it (or with it false)', () => {
    for (const [name, value] of Object.entries(ROOTS)) {
      for (const flag of [{}, { OUTBOUND_ALLOW_PRIVATE: 'false' }, { TARGETS_ALLOW_PRIVATE: 'false' }]) {
        expect(
          () => loadConfig({ ...BASE_ENV, ...flag, [name]: value }),
          `${name} ${JSON.stringify(flag)}`,
        ).toThrow(
          `Invalid configuration:\n  ${name}: ${value} is on a loopback address; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true (for an emulator in tests and demos).`,
        );
      }
    }
    // Every such root is named at once.
    expect(() => loadConfig({ ...BASE_ENV, ...ROOTS })).toThrow(
      /GOOGLE_API_ROOT_URL: .*\n {2}GOOGLE_OAUTH_URL: .*\n {2}MICROSOFT_GRAPH_URL: .*\n {2}MICROSOFT_LOGIN_URL: /,
    );
  });

  it('refuses localhost, private, link-local and IPv6 loopback hosts alike, and never a metadata address', () => {
    for (const [value, kind] of [
      ['http://localhost:8901/v1.0', 'a loopback address'],
      ['http://graph.localhost/v1.0', 'a loopback address'],
      ['http://[::1]:8901/v1.0', 'a loopback address'],
      ['http://10.1.2.3/v1.0', 'a private address'],
      ['https://192.168.0.9/v1.0', 'a private address'],
      ['http://[fe80::1]/v1.0', 'a link-local address'],
      ['http://2130706433/v1.0', 'a loopback address'],
    ]) {
      expect(() => loadConfig({ ...BASE_ENV, MICROSOFT_GRAPH_URL: value }), value).toThrow(
        `is on ${kind}; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true`,
      );
      expect(
        loadConfig({ ...BASE_ENV, MICROSOFT_GRAPH_URL: value, OUTBOUND_ALLOW_PRIVATE: 'true' }).microsoft
          .graphUrl,
      ).toBe(value);
    }
    for (const flag of [{}, { OUTBOUND_ALLOW_PRIVATE: 'true' }]) {
      expect(() =>
        loadConfig({ ...BASE_ENV, ...flag, GOOGLE_API_ROOT_URL: 'http://169.254.169.254/' }),
      ).toThrow(
        'GOOGLE_API_ROOT_URL: http://169.254.169.254/ is on a cloud metadata address, which Calgate never calls.',
      );
    }
  });

  it('accepts them with OUTBOUND_ALLOW_PRIVATE=true or its old name TARGETS_ALLOW_PRIVATE=true, and public roots without', () => {
    for (const flag of [{ OUTBOUND_ALLOW_PRIVATE: 'true' }, { TARGETS_ALLOW_PRIVATE: 'true' }]) {
      const config = loadConfig({ ...BASE_ENV, ...flag, ...ROOTS });
      expect(config.google.apiRootUrl).toBe(ROOTS.GOOGLE_API_ROOT_URL);
      expect(config.google.oauthUrl).toBe(ROOTS.GOOGLE_OAUTH_URL);
      expect(config.microsoft.graphUrl).toBe(ROOTS.MICROSOFT_GRAPH_URL);
      expect(config.microsoft.tokenUrl).toBe('http://127.0.0.1:8901/common/oauth2/v2.0/token');
    }
    const config = loadConfig({
      ...BASE_ENV,
      GOOGLE_API_ROOT_URL: 'https://www.googleapis.com/',
      MICROSOFT_GRAPH_URL: 'https://graph.microsoft.us/v1.0',
      MICROSOFT_LOGIN_URL: 'https://login.microsoftonline.us',
    });
    expect(config.microsoft.graphUrl).toBe('https://graph.microsoft.us/v1.0');
  });

  it('stops `calgate serve` and `calgate worker` at start with that message, before anything is reached', async () => {
    const bin = fileURLToPath(new URL('../src/bin/calgate.ts', import.meta.url));
    for (const [command, name, value] of [
      ['serve', 'MICROSOFT_GRAPH_URL', 'http://127.0.0.1:8901/v1.0'],
      ['worker', 'GOOGLE_API_ROOT_URL', 'http://localhost:8900/'],
    ] as const) {
      const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [bin, command],
          // A database nobody listens on: the refusal must come before any connection.
          { env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://127.0.0.1:1/none', [name]: value } },
          (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
        );
      });
      expect(run.code, command).toBe(1);
      expect(run.stderr).toContain(
        `${name}: ${value} is on a loopback address; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true`,
      );
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
