import type { FastifyInstance } from 'fastify';
import { clientConfigs, clientConfigurations, KEY_PLACEHOLDER } from '../../client-configs.ts';
import type { ApiDeps } from './deps.ts';

/**
 * The MCP URL, client configurations, the state of each connected account, and what the
 * onboarding checklist needs: the calendars there are to grant and the live API keys.
 */
export function registerOverviewRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/api/v1/overview', async (request) => {
    const { tenantId } = await deps.guard.session(request);
    const mcpUrl = `${deps.publicUrl}/api/mcp`;
    const [connections, calendars, keys] = await Promise.all([
      deps.connections.list(tenantId),
      deps.tenancy.listCalendars(tenantId),
      deps.keys.list(tenantId),
    ]);
    const now = Date.now();
    return {
      mcpUrl,
      clientConfigs: clientConfigs(mcpUrl),
      // The same blocks, as text, that `npm start` prints on a first run (with the key).
      clients: clientConfigurations(mcpUrl),
      keyPlaceholder: KEY_PLACEHOLDER,
      calendars: calendars.map(({ id, connectionId, summary, accessRole, enabled }) => ({
        id,
        connectionId,
        summary,
        writable: accessRole === 'owner' || accessRole === 'writer',
        enabled,
      })),
      liveKeys: keys.filter(
        (key) => key.revokedAt === null && (key.expiresAt === null || key.expiresAt.getTime() > now),
      ).length,
      accounts: connections.map(({ id, provider, accountEmail, auth, status, statusDetail }) => ({
        id,
        provider,
        accountEmail,
        auth,
        status,
        statusDetail,
      })),
    };
  });
}
