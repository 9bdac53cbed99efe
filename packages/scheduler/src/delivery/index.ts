export * from './address.ts';
export * from './backoff.ts';
export * from './payload.ts';
export * from './signing.ts';
export * from './ssrf.ts';
export * from './webhook.ts';
