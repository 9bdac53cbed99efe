import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  type AddressClass,
  checkTargetUrl,
  classifyAddress,
  type HostResolver,
  pinnedLookup,
  type ResolvedAddress,
  TargetPolicyError,
} from '../src/index.ts';

type Verdict = 'ok' | AddressClass | 'invalid';

async function verdict(url: string, allowPrivate: boolean, resolve?: HostResolver): Promise<Verdict> {
  const result = await checkTargetUrl(url, { allowPrivate, ...(resolve ? { resolve } : {}) });
  if (result.ok) {
    return 'ok';
  }
  if (result.error.code === 'invalid_argument') {
    return 'invalid';
  }
  expect(result.error.code).toBe('permission_denied');
  return result.error.context.addressClass as AddressClass;
}

describe('checkTargetUrl: addresses, with private networks refused', () => {
  it.each<[string, Verdict]>([
    ['https://8.8.8.8/hook', 'ok'],
    ['https://[2606:4700:4700::1111]/hook', 'ok'],
    ['https://172.32.0.1/', 'ok'],
    ['https://100.128.0.1/', 'ok'],
    ['https://127.0.0.1/', 'loopback'],
    ['https://127.255.255.254:8443/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://0x7f000001/', 'loopback'],
    ['https://017700000001/', 'loopback'],
    ['https://0177.0.0.1/', 'loopback'],
    ['https://127.1/', 'loopback'],
    ['https://[::1]/', 'loopback'],
    ['https://[0:0:0:0:0:0:0:1]/', 'loopback'],
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[::ffff:7f00:1]/', 'loopback'],
    ['https://[64:ff9b::7f00:1]/', 'loopback'],
    ['https://[2002:7f00:1::1]/', 'loopback'],
    ['https://localhost/', 'loopback'],
    ['https://LOCALHOST:8443/', 'loopback'],
    ['https://10.1.2.3/', 'private'],
    ['https://172.16.0.1/', 'private'],
    ['https://172.31.255.255/', 'private'],
    ['https://192.168.1.1/', 'private'],
    ['https://3232235777/', 'private'],
    ['https://[::ffff:10.0.0.1]/', 'private'],
    ['https://[fc00::1]/', 'private'],
    ['https://[fd12:3456::1]/', 'private'],
    ['https://169.254.1.1/', 'link-local'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://[febf::1]/', 'link-local'],
    ['https://100.64.0.1/', 'cgnat'],
    ['https://100.127.255.255/', 'cgnat'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://0/', 'unspecified'],
    ['https://[::]/', 'unspecified'],
    ['https://169.254.169.254/latest/meta-data/', 'metadata'],
    ['https://0xa9fea9fe/', 'metadata'],
    ['https://[::ffff:169.254.169.254]/', 'metadata'],
    ['https://[fd00:ec2::254]/', 'metadata'],
    ['https://100.100.100.200/', 'metadata'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://[ff02::1]/', 'multicast'],
    ['https://255.255.255.255/', 'broadcast'],
    ['https://240.0.0.1/', 'reserved'],
    ['https://192.0.2.10/', 'reserved'],
    ['https://[2001:db8::1]/', 'reserved'],
  ])('%s → %s', async (url, expected) => {
    expect(await verdict(url, false)).toBe(expected);
  });
});

describe('checkTargetUrl: shape', () => {
  it.each<[string, boolean, Verdict]>([
    ['http://8.8.8.8/', false, 'invalid'],
    ['http://8.8.8.8/', true, 'ok'],
    ['ftp://8.8.8.8/', true, 'invalid'],
    ['file:///etc/passwd', true, 'invalid'],
    ['javascript:alert(1)', true, 'invalid'],
    ['ws://8.8.8.8/', true, 'invalid'],
    ['not a url', true, 'invalid'],
    ['/relative/path', true, 'invalid'],
    ['https://user:pass@8.8.8.8/', false, 'invalid'],
    ['https://user@8.8.8.8/', true, 'invalid'],
    ['https://:pass@127.0.0.1/', true, 'invalid'],
    [`https://8.8.8.8/${'a'.repeat(2100)}`, false, 'invalid'],
  ])('%s (allowPrivate=%s) → %s', async (url, allowPrivate, expected) => {
    expect(await verdict(url, allowPrivate)).toBe(expected);
  });

  it('says why, without the credentials or the query string', async () => {
    const withCredentials = await checkTargetUrl('https://alice:hunter2@8.8.8.8/', { allowPrivate: false });
    expect(withCredentials.ok || withCredentials.error.message).toBe(
      'target URL must not contain credentials',
    );
    const plain = await checkTargetUrl('http://8.8.8.8/', { allowPrivate: false });
    expect(plain.ok || plain.error.message).toBe(
      'target URL must use https; Calgate accepts plain http only when TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true)',
    );
    expect(plain.ok || plain.error instanceof TargetPolicyError).toBe(true);
    const scheme = await checkTargetUrl('gopher://8.8.8.8/', { allowPrivate: true });
    expect(scheme.ok || scheme.error.message).toBe('target URL must use https, not gopher');
    const refused = await checkTargetUrl('https://10.0.0.1/hook?token=s3cr3t', { allowPrivate: false });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.message).toBe(
        'target URL address 10.0.0.1 is a private address; Calgate refuses private targets unless TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true)',
      );
      expect(refused.error).toBeInstanceOf(TargetPolicyError);
      expect(JSON.stringify(refused.error.context)).not.toContain('s3cr3t');
    }
    const named = await checkTargetUrl('https://localhost/?token=s3cr3t', { allowPrivate: false });
    expect(named.ok || named.error.message).toMatch(
      /^target URL host localhost resolves to 127\.0\.0\.1, which is a loopback address;/,
    );
  });

  it('accepts https for public hosts when plain http is also allowed explicitly', async () => {
    expect(await verdict('https://8.8.8.8/', false)).toBe('ok');
    const r = await checkTargetUrl('http://8.8.8.8/', { allowPrivate: false, requireHttps: false });
    expect(r.ok).toBe(true);
    const strict = await checkTargetUrl('http://127.0.0.1/', { allowPrivate: true, requireHttps: true });
    expect(strict.ok).toBe(false);
  });
});

describe('checkTargetUrl with allowPrivate (TARGETS_ALLOW_PRIVATE=true)', () => {
  it.each<[string, Verdict]>([
    ['http://127.0.0.1:8080/hook', 'ok'],
    ['http://localhost:3000/', 'ok'],
    ['http://2130706433/', 'ok'],
    ['http://[::1]:9000/', 'ok'],
    ['http://10.0.0.5/', 'ok'],
    ['http://192.168.0.10/', 'ok'],
    ['http://100.64.1.1/', 'ok'],
    ['http://169.254.10.10/', 'ok'],
    ['https://[fd12::1]/', 'ok'],
    ['http://169.254.169.254/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://[::ffff:169.254.169.254]/', 'metadata'],
    ['http://239.1.2.3/', 'multicast'],
    ['http://255.255.255.255/', 'broadcast'],
  ])('%s → %s', async (url, expected) => {
    expect(await verdict(url, true)).toBe(expected);
  });

  it('returns the vetted addresses, and no hint about the setting for what it cannot allow', async () => {
    const local = await checkTargetUrl('http://localhost:3000/x', { allowPrivate: true });
    expect(local.ok && local.value.addresses).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(local.ok && local.value.url.href).toBe('http://localhost:3000/x');
    const metadata = await checkTargetUrl('http://169.254.169.254/', { allowPrivate: true });
    expect(metadata.ok || metadata.error.message).toBe(
      'target URL address 169.254.169.254 is a cloud metadata address; no setting allows it',
    );
    // No setting would let it through, so it is not a policy refusal a delivery could wait out.
    expect(metadata.ok || metadata.error instanceof TargetPolicyError).toBe(false);
  });
});

describe('checkTargetUrl: every resolved address counts', () => {
  const records =
    (list: ResolvedAddress[]): HostResolver =>
    async () =>
      list;

  it('refuses a host when any one of its A/AAAA records is private', async () => {
    const mixed = records([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
      { address: 'fe80::1', family: 6 },
    ]);
    expect(await verdict('https://hooks.example.com/', false, mixed)).toBe('link-local');
    const mapped = records([{ address: '::ffff:192.168.1.1', family: 6 }]);
    expect(await verdict('https://hooks.example.com/', false, mapped)).toBe('private');
    const good = records([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    const ok = await checkTargetUrl('https://hooks.example.com/', { allowPrivate: false, resolve: good });
    expect(ok.ok && ok.value.addresses).toHaveLength(2);
  });

  it('reports a host that does not resolve as retryable, and one with no records too', async () => {
    const failing: HostResolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    const missing = await checkTargetUrl('https://nowhere.invalid/', {
      allowPrivate: false,
      resolve: failing,
    });
    expect(missing.ok).toBe(false);
    if (!missing.ok) {
      expect(missing.error).toMatchObject({
        code: 'unavailable',
        retry: true,
        context: { dnsCode: 'ENOTFOUND' },
      });
      expect(missing.error.message).toBe('target host nowhere.invalid could not be resolved');
    }
    const empty = await checkTargetUrl('https://empty.example/', {
      allowPrivate: false,
      resolve: records([]),
    });
    expect(empty.ok || empty.error.code).toBe('unavailable');
  });

  it('gives up on a host that does not resolve in time, as retryable', async () => {
    const hanging: HostResolver = () => new Promise(() => {});
    const slow = await checkTargetUrl('https://slow.example/', {
      allowPrivate: false,
      resolve: hanging,
      resolveTimeoutMs: 50,
    });
    expect(slow.ok).toBe(false);
    if (!slow.ok) {
      expect(slow.error).toMatchObject({
        code: 'unavailable',
        retry: true,
        context: { dnsCode: 'ETIMEOUT' },
      });
      expect(slow.error.message).toBe('target host slow.example could not be resolved');
    }
  });

  it('resolves real names through the system resolver', async () => {
    const missing = await checkTargetUrl('https://calgate-does-not-exist.invalid/', { allowPrivate: true });
    expect(missing.ok || missing.error.retry).toBe(true);
  });
});

describe('classifyAddress', () => {
  it.each<[string, AddressClass | undefined]>([
    ['1.1.1.1', 'public'],
    ['[2001:4860:4860::8888]', 'public'],
    ['fe80::1%eth0', 'link-local'],
    ['::ffff:0a00:0001', 'private'],
    ['::127.0.0.1', 'reserved'],
    ['64:ff9b:1::1', 'private'],
    ['fec0::1', 'private'],
    ['198.19.255.255', 'reserved'],
    ['example.com', undefined],
    ['127.1', undefined],
    ['', undefined],
  ])('%s → %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });
});

describe('pinnedLookup', () => {
  const vetted: ResolvedAddress[] = [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ];
  const ask = (options: { all?: boolean; family?: number }) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>(
      (resolve) => {
        pinnedLookup(vetted)('rebound.example.com', options, (error, address, family) =>
          resolve({ error, address, ...(family === undefined ? {} : { family }) }),
        );
      },
    );

  it('answers any host name with the vetted addresses only', async () => {
    expect(await ask({ all: true })).toEqual({ error: null, address: vetted });
    expect(await ask({})).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    expect(await ask({ family: 6 })).toEqual({ error: null, address: '::1', family: 6 });
  });

  it('fails when no vetted address has the requested family', async () => {
    const only4: ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }];
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      pinnedLookup(only4)('x', { family: 6 }, (e) => resolve(e)),
    );
    expect(error?.code).toBe('ENOTFOUND');
  });
});

describe('checkTargetUrl with httpOnlyPrivate (a URL that carries credentials)', () => {
  const at =
    (address: string): HostResolver =>
    async () => [{ address, family: 4 }];

  it('refuses plain http to a public address, with or without allowPrivate, and takes https there', async () => {
    for (const allowPrivate of [false, true]) {
      const named = await checkTargetUrl('http://dav.example.com/', {
        allowPrivate,
        httpOnlyPrivate: true,
        resolve: at('93.184.216.34'),
      });
      expect(named.ok).toBe(false);
      expect(!named.ok && named.error.message).toBe(
        'target URL must use https: host dav.example.com resolves to 93.184.216.34, a public address, and Calgate sends plain http only to private or loopback addresses, with TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true)',
      );
      expect(!named.ok && named.error).not.toBeInstanceOf(TargetPolicyError);
      const literal = await checkTargetUrl('http://93.184.216.34/', { allowPrivate, httpOnlyPrivate: true });
      expect(!literal.ok && literal.error.message).toMatch(
        /^target URL must use https: address 93\.184\.216\.34 is public,/,
      );
      const tls = await checkTargetUrl('https://dav.example.com/', {
        allowPrivate,
        httpOnlyPrivate: true,
        resolve: at('93.184.216.34'),
      });
      expect(tls.ok).toBe(true);
    }
  });

  it('takes plain http to a private address with allowPrivate only', async () => {
    const lan = { httpOnlyPrivate: true, resolve: at('192.168.1.5') };
    expect((await checkTargetUrl('http://nas.example.com/', { ...lan, allowPrivate: true })).ok).toBe(true);
    const refused = await checkTargetUrl('http://nas.example.com/', { ...lan, allowPrivate: false });
    expect(!refused.ok && refused.error).toBeInstanceOf(TargetPolicyError);
  });
});
