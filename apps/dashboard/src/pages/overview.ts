import { api } from '../api.ts';
import { copyButton, h } from '../dom.ts';

interface Overview {
  mcpUrl: string;
  clientConfigs: Record<string, unknown>;
  accounts: {
    id: string;
    accountEmail: string | null;
    provider: string;
    status: string;
    statusDetail?: string | null;
  }[];
}

const CLIENTS: Record<string, string> = {
  claudeCode: 'Claude Code',
  claudeDesktop: 'Claude Desktop',
  cursor: 'Cursor',
  claudeAi: 'Claude.ai connector',
  chatgpt: 'ChatGPT connector',
};

/** How an account is called on screen; local calendars are kept by Calgate itself. */
export function accountName(account: { id: string; provider: string; accountEmail: string | null }): string {
  return account.accountEmail ?? (account.provider === 'local' ? 'Calgate calendars' : account.id);
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge ${status}` }, status.replace('_', ' '));
}

/** The MCP URL, copy-ready client configurations and the state of each account. */
export async function renderOverview(root: HTMLElement): Promise<void> {
  const overview = await api<Overview>('GET', '/overview');
  const configs = Object.entries(overview.clientConfigs).map(([name, config]) => {
    const text = typeof config === 'string' ? config : JSON.stringify(config, null, 2);
    const label = CLIENTS[name] ?? name;
    return h(
      'section',
      { class: 'card' },
      h(
        'div',
        { class: 'row spread' },
        h('h3', {}, label),
        copyButton(text, `Copy the ${label} configuration`),
      ),
      h('pre', { tabindex: '0', 'aria-label': `${label} configuration` }, text),
    );
  });
  root.append(
    h(
      'section',
      { class: 'card' },
      h('h2', {}, 'MCP endpoint'),
      h(
        'div',
        { class: 'row' },
        h('code', { id: 'mcp-url' }, overview.mcpUrl),
        copyButton(overview.mcpUrl, 'Copy the MCP URL'),
      ),
      h(
        'p',
        {},
        'Create a key under ',
        h('a', { href: '/keys' }, 'API keys'),
        ' and put it where the configurations say <YOUR_API_KEY>.',
      ),
    ),
    h('h2', {}, 'Client configurations'),
    h('div', { class: 'grid' }, configs),
    h('h2', {}, 'Accounts'),
    overview.accounts.length === 0
      ? h('p', {}, 'No accounts yet. ', h('a', { href: '/accounts' }, 'Connect a Google account'), '.')
      : h(
          'ul',
          { class: 'plain' },
          overview.accounts.map((account) =>
            h('li', {}, `${accountName(account)} `, statusBadge(account.status)),
          ),
        ),
  );
}
