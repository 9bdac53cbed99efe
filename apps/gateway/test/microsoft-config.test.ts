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
