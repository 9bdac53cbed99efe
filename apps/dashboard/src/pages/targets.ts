import { api } from '../api.ts';
import { copyButton, h } from '../dom.ts';
import { actor, instant, table } from './scheduler-common.ts';

interface Target {
  id: string;
  kind: 'webhook' | 'letta';
  name: string;
  origin: string;
  defaultAgentId: string | null;
  disabled: boolean;
  disabledAt: string | null;
  disabledReason: string | null;
  createdAt: string;
  liveSchedules: number;
}

interface TestResult {
  ok: boolean;
  status: number | null;
  durationMs: number;
  error: string | null;
}

function secretPanel(name: string, secret: string, hint: string): HTMLElement {
  return h(
    'section',
    { class: 'card secret', role: 'status', 'aria-label': `Signing secret for ${name}` },
    h('h2', {}, `Signing secret for ${name}`),
    h('p', {}, hint),
    h(
      'div',
      { class: 'row' },
      h('code', { id: 'target-secret' }, secret),
      copyButton(secret, 'Copy the signing secret'),
    ),
  );
}

function field(id: string, label: string, attrs: Record<string, string | boolean> = {}) {
  const input = h('input', { id, name: id, ...attrs });
  return { input, nodes: [h('label', { for: id }, label), input] };
}

/**
 * Delivery targets of scheduled prompts: webhooks (signed; the secret is shown once) and Letta
 * servers. Only a URL's origin is ever shown: its path or query may carry a token.
 */
export async function renderTargets(root: HTMLElement): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const shown = h('div', {});
  const list = h('div', {});
  const privateNote = h('p', { class: 'muted' });
  const act = actor(status, load);

  function row(target: Target): HTMLElement {
    const state = target.disabled
      ? [
          h('span', { class: 'badge error' }, 'disabled'),
          ' ',
          instant(target.disabledAt),
          h('br', {}),
          target.disabledReason ?? '',
        ]
      : [h('span', { class: 'badge active' }, 'active')];
    return h(
      'tr',
      {},
      h('th', { scope: 'row' }, target.name),
      h('td', {}, target.kind === 'webhook' ? 'Webhook' : 'Letta'),
      h('td', {}, h('code', {}, target.origin)),
      h('td', {}, target.defaultAgentId === null ? '—' : h('code', {}, target.defaultAgentId)),
      h('td', { class: 'num' }, target.liveSchedules),
      h('td', {}, state),
      h(
        'td',
        { class: 'actions' },
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `Send a test to ${target.name}`,
            onclick: () =>
              void act(async () => {
                const { test } = await api<{ test: TestResult }>('POST', `/targets/${target.id}/test`);
                const answer = test.status === null ? 'no answer' : `HTTP ${test.status}`;
                if (!test.ok) {
                  throw new Error(
                    `Test of ${target.name} failed (${answer}, ${test.durationMs} ms): ${test.error ?? 'no detail'}`,
                  );
                }
                return `Test of ${target.name} succeeded: ${answer} in ${test.durationMs} ms.`;
              }),
          },
          'Send test',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            'aria-label': `${target.disabled ? 'Enable' : 'Disable'} ${target.name}`,
            onclick: () =>
              void act(async () => {
                await api('POST', `/targets/${target.id}/${target.disabled ? 'enable' : 'disable'}`);
                return `${target.name} ${target.disabled ? 'enabled' : 'disabled'}.`;
              }),
          },
          target.disabled ? 'Enable' : 'Disable',
        ),
        h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'aria-label': `Delete ${target.name}`,
            onclick: () =>
              void act(async () => {
                await api('DELETE', `/targets/${target.id}`);
                return `${target.name} deleted.`;
              }),
          },
          'Delete',
        ),
      ),
    );
  }

  async function load(): Promise<void> {
    const answer = await api<{ targets: Target[]; allowPrivateTargets: boolean }>('GET', '/targets');
    privateNote.textContent = answer.allowPrivateTargets
      ? 'This Calgate accepts targets on loopback and private networks (OUTBOUND_ALLOW_PRIVATE=true), over http or https. Its workers apply their own setting: an occurrence a worker refuses waits as blocked until a worker with the setting on starts.'
      : 'Targets must be public https addresses; loopback and private networks are refused unless TARGETS_ALLOW_PRIVATE=true (or OUTBOUND_ALLOW_PRIVATE=true).';
    list.replaceChildren(
      answer.targets.length === 0
        ? h('p', {}, 'No delivery targets yet: add a webhook or a Letta server above.')
        : table(
            'Delivery targets',
            ['Name', 'Kind', 'Origin', 'Default agent', 'Live schedules', 'State', 'Actions'],
            answer.targets.map(row),
          ),
    );
  }

  const hookName = field('webhook-name', 'Webhook name', { required: true, maxlength: '100' });
  const hookUrl = field('webhook-url', 'Webhook URL', {
    required: true,
    type: 'url',
    placeholder: 'https://example.com/hooks/calgate',
  });
  const webhookForm = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-webhook' },
    h('h2', { id: 'new-webhook' }, 'New webhook'),
    h('p', { class: 'muted' }, 'Each prompt is POSTed as JSON, signed with Standard Webhooks.'),
    hookName.nodes,
    hookUrl.nodes,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Create webhook')),
  );
  webhookForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(async () => {
      const answer = await api<{ target: Target; secret: string; secretHint: string }>('POST', '/targets', {
        kind: 'webhook',
        name: hookName.input.value,
        url: hookUrl.input.value,
      });
      shown.replaceChildren(secretPanel(answer.target.name, answer.secret, answer.secretHint));
      webhookForm.reset();
      return `Webhook ${answer.target.name} created.`;
    });
  });

  const lettaName = field('letta-name', 'Letta target name', { required: true, maxlength: '100' });
  const lettaUrl = field('letta-url', 'Letta base URL', {
    required: true,
    type: 'url',
    placeholder: 'https://letta.example.com',
  });
  const lettaKey = field('letta-key', 'Letta API key', {
    required: true,
    type: 'password',
    autocomplete: 'off',
  });
  const lettaAgent = field('letta-agent', 'Default agent (optional)', {
    placeholder: 'agent-…',
    maxlength: '200',
  });
  const lettaForm = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-letta' },
    h('h2', { id: 'new-letta' }, 'New Letta server'),
    h('p', { class: 'muted' }, 'Prompts become messages to a Letta agent; the API key is stored encrypted.'),
    lettaName.nodes,
    lettaUrl.nodes,
    lettaKey.nodes,
    lettaAgent.nodes,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Create Letta target')),
  );
  lettaForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void act(async () => {
      const agent = lettaAgent.input.value.trim();
      const { target } = await api<{ target: Target }>('POST', '/targets', {
        kind: 'letta',
        name: lettaName.input.value,
        url: lettaUrl.input.value,
        apiKey: lettaKey.input.value,
        ...(agent === '' ? {} : { defaultAgentId: agent }),
      });
      shown.replaceChildren();
      lettaForm.reset();
      return `Letta target ${target.name} created.`;
    });
  });

  root.append(
    h(
      'p',
      {},
      'Scheduled prompts are delivered to these targets. Agents choose a target by its id when they schedule a prompt.',
    ),
    privateNote,
    status,
    shown,
    h('div', { class: 'grid' }, webhookForm, lettaForm),
    list,
  );
  await load();
}
