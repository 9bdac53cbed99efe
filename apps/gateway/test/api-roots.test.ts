/**
 * API roots named by host name are looked up when a Calgate process starts: one resolving to a
 * loopback or private address needs OUTBOUND_ALLOW_PRIVATE=true, as one written as an address
 * does (microsoft-config.test.ts). Resolution goes through the scheduler's URL check
 * (`checkTargetUrl`, tested against the system resolver there); here its resolver is given.
 */
import type { HostResolver } from '@calgate/scheduler';
import { describe, expect, it } from 'vitest';
import { checkApiRootHosts } from '../src/api-roots.ts';
import { loadConfig } from '../src/config.ts';

const BASE_ENV = { DATABASE_URL: 'postgres://calgate@127.0.0.1:5432/calgate' };
const HOSTS: Record<string, string> = {
  'graph.lab.example': '10.0.0.5',
  'login.lab.example': '192.168.1.7',
  'google.lab.example': '127.0.1.1',
  'meta.lab.example': '169.254.169.254',
  'graph.public.example': '93.184.216.34',
};
const resolve: HostResolver = async (host) => {
  const address = HOSTS[host];
  if (address === undefined) {
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  }
  return [{ address, family: 4 }];
};

describe('API roots by host name, looked up at start', () => {
  it('refuses names resolving to loopback or private addresses without OUTBOUND_ALLOW_PRIVATE, naming each', async () => {
    const config = loadConfig({
      ...BASE_ENV,
      GOOGLE_API_ROOT_URL: 'http://google.lab.example:8900/',
      MICROSOFT_GRAPH_URL: 'https://graph.lab.example/v1.0',
      MICROSOFT_LOGIN_URL: 'https://login.lab.example',
    });
    await expect(checkApiRootHosts(config, resolve)).rejects.toThrow(
      [
        'Invalid configuration:',
        '  GOOGLE_API_ROOT_URL: http://google.lab.example:8900/: google.lab.example resolves to 127.0.1.1, a loopback address; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true (for an emulator in tests and demos).',
        '  MICROSOFT_GRAPH_URL: https://graph.lab.example/v1.0: graph.lab.example resolves to 10.0.0.5, a private address; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true (for an emulator in tests and demos).',
        '  MICROSOFT_LOGIN_URL: https://login.lab.example: login.lab.example resolves to 192.168.1.7, a private address; Calgate reaches loopback and private addresses only with OUTBOUND_ALLOW_PRIVATE=true (for an emulator in tests and demos).',
      ].join('\n'),
    );
  });

  it('accepts them with OUTBOUND_ALLOW_PRIVATE=true; public, unresolvable and default roots pass', async () => {
    const lab = loadConfig({
      ...BASE_ENV,
      OUTBOUND_ALLOW_PRIVATE: 'true',
      MICROSOFT_GRAPH_URL: 'https://graph.lab.example/v1.0',
    });
    await expect(checkApiRootHosts(lab, resolve)).resolves.toBeUndefined();
    const elsewhere = loadConfig({
      ...BASE_ENV,
      MICROSOFT_GRAPH_URL: 'https://graph.public.example/v1.0',
      MICROSOFT_LOGIN_URL: 'https://nowhere.example',
    });
    await expect(checkApiRootHosts(elsewhere, resolve)).resolves.toBeUndefined();
    // Microsoft's own roots (the defaults) are not looked up at all.
    const asked: string[] = [];
    await checkApiRootHosts(loadConfig(BASE_ENV), async (host) => {
      asked.push(host);
      return resolve(host);
    });
    expect(asked).toEqual([]);
  });

  it('refuses a name resolving to a cloud metadata address whatever the setting says', async () => {
    for (const flag of ['true', 'false']) {
      const config = loadConfig({
        ...BASE_ENV,
        OUTBOUND_ALLOW_PRIVATE: flag,
        GOOGLE_OAUTH_URL: 'http://meta.lab.example',
      });
      await expect(checkApiRootHosts(config, resolve)).rejects.toThrow(
        'GOOGLE_OAUTH_URL: http://meta.lab.example: meta.lab.example resolves to 169.254.169.254, a cloud metadata address, which Calgate never calls.',
      );
    }
  });
});
