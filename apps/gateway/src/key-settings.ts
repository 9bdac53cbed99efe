import type { ApiKeyRepository } from '@calgate/store';
import type { KeySettings } from '@calgate/tools';

/** The calling key's own settings for set_time_zone. */
export type KeySettingsFactory = (key: { tenantId: string; keyId: string }) => KeySettings;

/**
 * Key settings over the key store: the change is the one `calgate key set --time-zone` makes,
 * and this process's key cache is dropped so the key's next request reads it.
 */
export function keySettings(
  keys: Pick<ApiKeyRepository, 'get' | 'setDefaults'>,
  invalidate: (tenantId: string) => void,
): KeySettingsFactory {
  return ({ tenantId, keyId }) => ({
    async setTimeZone(timeZone) {
      const before = await keys.get(tenantId, keyId);
      await keys.setDefaults(tenantId, keyId, { timeZone });
      invalidate(tenantId);
      return { previous: before?.timeZone ?? null };
    },
  });
}
