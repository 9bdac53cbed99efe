/** Never a real key: configurations are shown on screen and copied around. */
export const KEY_PLACEHOLDER = '<YOUR_API_KEY>';

/** One client's configuration as it is printed and shown: the text a person pastes. */
export interface ClientConfiguration {
  client: string;
  label: string;
  text: string;
}

/** Copy-ready client configurations for the MCP URL, with `key` (else the placeholder) in them. */
export function clientConfigs(mcpUrl: string, key: string = KEY_PLACEHOLDER) {
  const headers = { Authorization: `Bearer ${key}` };
  return {
    claudeCode: `claude mcp add --transport http calgate ${mcpUrl} --header "Authorization: Bearer ${key}"`,
    claudeDesktop: {
      mcpServers: {
        calgate: {
          command: 'npx',
          args: ['-y', 'mcp-remote', mcpUrl, '--header', `Authorization:Bearer ${key}`],
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

const LABELS: Record<keyof ReturnType<typeof clientConfigs>, string> = {
  claudeCode: 'Claude Code',
  claudeDesktop: 'Claude Desktop',
  cursor: 'Cursor',
  claudeAi: 'Claude.ai connector',
  chatgpt: 'ChatGPT connector',
};

/**
 * The configurations as text, in one order: what `npm start` prints on a first run (with the
 * key) and what the dashboard's Overview shows (with the placeholder) are these same blocks.
 */
export function clientConfigurations(mcpUrl: string, key: string = KEY_PLACEHOLDER): ClientConfiguration[] {
  const configs = clientConfigs(mcpUrl, key);
  return (Object.keys(LABELS) as (keyof typeof configs)[]).map((client) => {
    const config = configs[client];
    return {
      client,
      label: LABELS[client],
      text: typeof config === 'string' ? config : JSON.stringify(config, null, 2),
    };
  });
}
