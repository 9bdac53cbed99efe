/** The master keys for stored secrets, from configuration or generated once into DATA_DIR. */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SecretBox } from '@calgate/store';
import { type Config, ConfigError } from '../config.ts';

/**
 * The master keys for stored secrets: ENCRYPTION_KEY (then ENCRYPTION_KEYS_PREVIOUS), or for the
 * embedded setup a key generated once into DATA_DIR with mode 0600.
 */
export async function loadSecretBox(config: Config, embedded: boolean): Promise<SecretBox> {
  if (config.encryptionKey !== undefined) {
    return new SecretBox([config.encryptionKey, ...config.previousEncryptionKeys]);
  }
  if (!embedded) {
    throw new ConfigError(
      'ENCRYPTION_KEY is required with DATABASE_URL (generate one: openssl rand -base64 32).',
    );
  }
  const file = join(resolve(config.dataDir), 'encryption-key');
  let encoded = await readFile(file, 'utf8').catch(() => undefined);
  if (encoded === undefined) {
    encoded = randomBytes(32).toString('base64');
    await writeFile(file, `${encoded}\n`, { mode: 0o600, flag: 'wx' }).catch(async () => {
      encoded = await readFile(file, 'utf8');
    });
  }
  await chmod(file, 0o600);
  return new SecretBox([
    new Uint8Array(Buffer.from(encoded.trim(), 'base64')),
    ...config.previousEncryptionKeys,
  ]);
}
