import { describe, expect, it } from 'vitest';
import { isLoopbackHostname, originPolicy } from '../src/http/origins.ts';

describe('isLoopbackHostname', () => {
  it('knows 127.0.0.0/8, ::1 and localhost', () => {
    for (const name of [
      '127.0.0.1',
      '127.8.9.10',
      '[::1]',
      '::1',
      'localhost',
      'LOCALHOST',
      '[::ffff:7f00:1]',
    ]) {
      expect(isLoopbackHostname(name), name).toBe(true);
    }
    for (const name of [
      '128.0.0.1',
      '10.0.0.1',
      '0.0.0.0',
      '[::2]',
      'evil.example',
      'localhost.evil.example',
      '',
    ]) {
      expect(isLoopbackHostname(name), name).toBe(false);
    }
  });
});

describe('originPolicy on a loopback PUBLIC_URL', () => {
  const policy = originPolicy('http://127.0.0.1:8787', ['http://127.0.0.1:8787', 'https://app.example.com']);

  it('accepts any loopback origin on any port, http or https, and the configured ones', () => {
    expect(policy.loopback).toBe(true);
    for (const origin of [
      'http://127.0.0.1:8787',
      'http://127.0.0.1:5173',
      'https://localhost:3000',
      'http://localhost',
      'http://[::1]:9000',
      'https://app.example.com',
    ]) {
      expect(policy.refusal(origin, '127.0.0.1:8787'), origin).toBeUndefined();
    }
  });

  it('refuses other origins, malformed ones and non-web schemes', () => {
    for (const origin of [
      'http://evil.example',
      'null',
      'file://',
      'ftp://127.0.0.1',
      'http://127.0.0.1:80/x',
    ]) {
      expect(policy.refusal(origin, '127.0.0.1:8787'), origin).toMatch(/is not allowed/);
    }
  });

  it('refuses a Host that is not a loopback name (DNS rebinding) and accepts loopback ones', () => {
    expect(policy.refusal(undefined, 'evil.example:8787')).toMatch(
      /Host evil\.example:8787 is not this gateway/,
    );
    expect(policy.refusal('http://127.0.0.1:5173', 'evil.example')).toMatch(/not this gateway/);
    expect(policy.refusal(undefined, undefined)).toMatch(/Host \(none\)/);
    expect(policy.refusal(undefined, 'user@127.0.0.1:8787')).toMatch(/not this gateway/);
    for (const host of ['127.0.0.1:8787', 'localhost:8787', '[::1]:1234', '127.0.0.2', 'localhost']) {
      expect(policy.refusal(undefined, host), host).toBeUndefined();
    }
  });
});

describe('originPolicy on a public PUBLIC_URL', () => {
  const policy = originPolicy('https://calgate.example.com', [
    'https://calgate.example.com',
    'https://app.example.com',
  ]);

  it('accepts only its own origin and ALLOWED_ORIGINS', () => {
    expect(policy.loopback).toBe(false);
    expect(policy.refusal('https://calgate.example.com', 'calgate.example.com')).toBeUndefined();
    expect(policy.refusal('https://app.example.com', 'calgate.example.com')).toBeUndefined();
    for (const origin of ['http://127.0.0.1:5173', 'http://localhost', 'http://calgate.example.com']) {
      expect(policy.refusal(origin, 'calgate.example.com'), origin).toMatch(/ALLOWED_ORIGINS/);
    }
  });

  it('leaves Host to the proxy in front', () => {
    expect(policy.refusal(undefined, 'internal-name:8787')).toBeUndefined();
    expect(policy.refusal(undefined, undefined)).toBeUndefined();
  });
});
