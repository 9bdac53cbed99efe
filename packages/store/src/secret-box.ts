import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { CalgateError } from '@calgate/core';

/** A ciphertext and the id of the master key that sealed it. */
export interface SealedSecret {
  keyId: string;
  ciphertext: Uint8Array;
}

/** What a secret is bound to: a copy placed on another connection will not open. */
export interface SecretBinding {
  tenantId: string;
  connectionId: string;
}

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The id stored beside each ciphertext: derived from the key, so configuration lists keys only. */
export function keyIdOf(key: Uint8Array): string {
  return `k_${createHash('sha256').update('calgate-secret-box').update(key).digest('hex').slice(0, 12)}`;
}

/**
 * AES-256-GCM with the tenant and connection ids as associated data. The first key seals; every
 * key opens, so a master key rotates by putting the new key first and keeping the old ones until
 * `calgate secrets reseal` has run.
 */
export class SecretBox {
  readonly #keys: Map<string, Uint8Array>;
  readonly #activeId: string;

  constructor(keys: readonly Uint8Array[]) {
    const [active] = keys;
    if (active === undefined) {
      throw new Error('SecretBox needs at least one key');
    }
    for (const key of keys) {
      if (key.length !== 32) {
        throw new Error(`Encryption keys must be 32 bytes, got ${key.length}`);
      }
    }
    this.#keys = new Map(keys.map((key) => [keyIdOf(key), key]));
    this.#activeId = keyIdOf(active);
  }

  get activeKeyId(): string {
    return this.#activeId;
  }

  seal(plaintext: string, binding: SecretBinding): SealedSecret {
    const key = this.#keys.get(this.#activeId) as Uint8Array;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(associatedData(binding));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return {
      keyId: this.#activeId,
      ciphertext: Buffer.concat([Buffer.of(VERSION), iv, cipher.getAuthTag(), body]),
    };
  }

  open(sealed: SealedSecret, binding: SecretBinding): string {
    const key = this.#keys.get(sealed.keyId);
    if (key === undefined) {
      throw new CalgateError('internal', `Stored credentials were sealed with unknown key ${sealed.keyId}.`, {
        context: { keyId: sealed.keyId },
      });
    }
    const data = Buffer.from(sealed.ciphertext);
    if (data.length < 1 + IV_BYTES + TAG_BYTES || data[0] !== VERSION) {
      throw unreadable(binding);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(associatedData(binding));
      decipher.setAuthTag(data.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES));
      const body = data.subarray(1 + IV_BYTES + TAG_BYTES);
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw unreadable(binding);
    }
  }

  /**
   * A 32-byte key for another purpose (session cookies, OAuth state), derived from the active
   * master key with HKDF so that one secret is all an operator keeps.
   */
  deriveKey(purpose: string): Uint8Array {
    const key = this.#keys.get(this.#activeId) as Uint8Array;
    return new Uint8Array(hkdfSync('sha256', key, new Uint8Array(0), `calgate:${purpose}`, 32));
  }

  /** True when the secret is sealed with a key other than the active one. */
  needsReseal(sealed: SealedSecret): boolean {
    return sealed.keyId !== this.#activeId;
  }
}

function associatedData(binding: SecretBinding): Buffer {
  return Buffer.from(`calgate:v1:${binding.tenantId}:${binding.connectionId}`, 'utf8');
}

function unreadable(binding: SecretBinding): CalgateError {
  return new CalgateError('internal', 'Stored credentials could not be decrypted for this connection.', {
    context: { connectionId: binding.connectionId },
  });
}
