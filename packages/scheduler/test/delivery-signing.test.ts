import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret,
  isValidMessageId,
  parseWebhookSecret,
  signWebhook,
  type WebhookKey,
} from '../src/index.ts';

function keyOf(secret: string): WebhookKey {
  const parsed = parseWebhookSecret(secret);
  if (!parsed.ok) {
    throw parsed.error;
  }
  return parsed.value;
}

const body = JSON.stringify({
  type: 'prompt.due',
  scheduleId: 'sch_1',
  occurrence: '2026-03-01T09:00:00.000Z',
  prompt: 'Review today’s calendar — déjà vu ✓',
  repetition: 1,
});

describe('webhook secrets', () => {
  it('generates whsec_ secrets of 32 random bytes', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(b);
    expect(keyOf(a).bytes).toHaveLength(32);
  });

  it.each([
    ['no prefix', Buffer.alloc(32, 1).toString('base64'), 'must start with "whsec_"'],
    ['not base64', 'whsec_not*base64!!', 'not valid base64'],
    ['too short', `whsec_${Buffer.alloc(16, 7).toString('base64')}`, 'must decode to 24–64 bytes'],
    ['too long', `whsec_${Buffer.alloc(65, 7).toString('base64')}`, 'must decode to 24–64 bytes'],
  ])('refuses a secret with %s, without repeating it', (_name, secret, message) => {
    const parsed = parseWebhookSecret(secret);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error.code).toBe('invalid_argument');
      expect(parsed.error.message).toContain(message);
      expect(parsed.error.message).not.toContain(secret.slice(6, 20));
      expect(JSON.stringify(parsed.error.context)).not.toContain(secret.slice(6, 20));
    }
  });

  it('accepts message ids that fit in a header and refuses the rest', () => {
    expect(isValidMessageId('sch_3hK9.2026-03-01T09:00:00Z')).toBe(true);
    expect(isValidMessageId('')).toBe(false);
    expect(isValidMessageId('has space')).toBe(false);
    expect(isValidMessageId('line\nbreak')).toBe(false);
    expect(isValidMessageId('x'.repeat(257))).toBe(false);
  });
});

describe('Standard Webhooks v1 signatures', () => {
  it('verify with the official standardwebhooks package', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook(keyOf(secret), { id: 'msg_1', timestamp: new Date(), body });
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('match the signature the official package computes', () => {
    const secret = generateWebhookSecret();
    const at = new Date('2026-03-01T09:00:00.750Z');
    const headers = signWebhook(keyOf(secret), { id: 'msg_2', timestamp: at, body });
    expect(headers['webhook-timestamp']).toBe(String(Date.parse('2026-03-01T09:00:00Z') / 1000));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_2', at, body));
  });

  it('fail verification under a wrong secret or a changed body, id or timestamp', () => {
    const secret = generateWebhookSecret();
    const headers = signWebhook(keyOf(secret), { id: 'msg_3', timestamp: new Date(), body });
    const verify = (s: string, b: string, h: Record<string, string>) => () => new Webhook(s).verify(b, h);
    expect(verify(generateWebhookSecret(), body, { ...headers })).toThrow(WebhookVerificationError);
    expect(verify(secret, body.replace('sch_1', 'sch_2'), { ...headers })).toThrow('No matching signature');
    expect(verify(secret, body, { ...headers, 'webhook-id': 'msg_4' })).toThrow('No matching signature');
    const earlier = String(Number(headers['webhook-timestamp']) - 1);
    expect(verify(secret, body, { ...headers, 'webhook-timestamp': earlier })).toThrow(
      'No matching signature',
    );
  });

  it('give a replay of the same id, timestamp and body the same signature', () => {
    const key = keyOf(generateWebhookSecret());
    const at = new Date();
    const first = signWebhook(key, { id: 'sch_1.1772355600', timestamp: at, body });
    const replay = signWebhook(key, { id: 'sch_1.1772355600', timestamp: new Date(at), body });
    expect(replay).toEqual(first);
    const later = signWebhook(key, {
      id: 'sch_1.1772355600',
      timestamp: new Date(at.getTime() + 5000),
      body,
    });
    expect(later['webhook-id']).toBe(first['webhook-id']);
    expect(later['webhook-signature']).not.toBe(first['webhook-signature']);
  });

  it('carry one signature per key while a secret is rotated, each verifying', () => {
    const oldSecret = generateWebhookSecret();
    const newSecret = generateWebhookSecret();
    const headers = signWebhook([keyOf(oldSecret), keyOf(newSecret)], {
      id: 'msg_5',
      timestamp: new Date(),
      body,
    });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(oldSecret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(newSecret).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers })).toThrow(
      WebhookVerificationError,
    );
  });
});
