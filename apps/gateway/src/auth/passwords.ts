import { randomBytes } from 'node:crypto';

// Loaded on the first sign-in or password change: a gateway that only serves agents never needs it.
let hashing: Promise<typeof import('hash-wasm')> | undefined;
const argon2 = () => {
  hashing ??= import('hash-wasm');
  return hashing;
};

/** OWASP's argon2id baseline: 19 MiB, two passes, one lane. */
const PARAMS = { memorySize: 19_456, iterations: 2, parallelism: 1, hashLength: 32 } as const;

export const MIN_PASSWORD_LENGTH = 12;

/** An argon2id PHC string (`$argon2id$v=19$m=19456,t=2,p=1$…`) with a fresh 16-byte salt. */
export async function hashPassword(password: string): Promise<string> {
  const { argon2id } = await argon2();
  return argon2id({ ...PARAMS, password, salt: new Uint8Array(randomBytes(16)), outputType: 'encoded' });
}

export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const { argon2Verify } = await argon2();
  try {
    return await argon2Verify({ password, hash: phc });
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/**
 * Spends the same work as a real check, so that an unknown email answers no faster than a wrong
 * password does.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummy);
  return false;
}
