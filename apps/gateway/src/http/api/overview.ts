import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from './deps.ts';

/** Never a real key: configurations are shown on screen and copied around. */
export const KEY_PLACEHOLDER = '<YOUR_API_KEY>';

/** Copy-ready client configurations for the MCP URL. */
export function clientConfigs(mcpUrl: string) {
  const headers = { Authorization: `Bearer ${KEY_PLACEHOLDER}` };
  return {
    claudeCode: `claude mcp add --transport http calgate ${mcpUrl} --header "Authorization: Bearer ${KEY_PLACEHOLDER}"`,
    claudeDesktop: {
      mcpServers: {
        calgate: {
          command: 'npx',
          args: ['-y', 'mcp-remote', mcpUrl, '--header', `Authorization:Bearer ${KEY_PLACEHOLDER}`],
        },
      },
    },
    cursor: { mcpServers: { calgate: { url: mcpUrl, headers } } },
    claudeAi: {
      url: mcpUrl,
      note: "In Claude.ai, add a custom connector (Settings → Connectors) with this URL and no key: Claude signs in with OAuth, and you choose its calendars on Calgate's consent page (see Connected apps).",
    },
    chatgpt: {
      url: mcpUrl,
      note: "In ChatGPT, add a custom connector (Settings → Connectors) with this URL and OAuth authentication: ChatGPT registers itself, and you choose its calendars on Calgate's consent page (see Connected apps).",
    },
  };
}

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
