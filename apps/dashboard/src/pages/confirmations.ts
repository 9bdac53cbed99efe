import { api } from '../api.ts';
import { h, notice, when } from '../dom.ts';

/** A risky call of an agent, refused until a person approves it here. */
interface Confirmation {
  id: string;
  keyName: string;
  tool: string;
  action: string;
  preceded: string[];
  createdAt: string;
  expiresAt: string;
}

/**
 * "Waiting for confirmation": risky calls (deleting events, batch changes, inviting outsiders,
 * schedules to named targets) an agent made after it read suspicious calendar content. Approving
 * lets the agent repeat exactly that call once; declining refuses it for good.
 */
export async function renderConfirmations(): Promise<HTMLElement> {
  const section = h('section', { class: 'card', 'aria-labelledby': 'confirmations-title' });
  const status = h('div', { 'aria-live': 'polite' });

  async function decide(confirmation: Confirmation, approve: boolean): Promise<void> {
    let result: HTMLElement;
    try {
      await api('POST', `/confirmations/${confirmation.id}/${approve ? 'approve' : 'decline'}`);
      result = notice(
        approve
          ? `Approved ${confirmation.id}: the agent of ${confirmation.keyName} may now repeat that call once.`
          : `Declined ${confirmation.id}: the agent of ${confirmation.keyName} stays refused.`,
      );
    } catch (error) {
      result = notice(error instanceof Error ? error.message : String(error), 'error');
    }
    await load();
    status.replaceChildren(result);
  }

  function item(confirmation: Confirmation): HTMLElement {
    return h(
      'li',
      { 'aria-label': `Confirmation ${confirmation.id}` },
      h(
        'p',
        {},
        h('strong', {}, confirmation.keyName),
        ` wants to ${confirmation.action} (${confirmation.tool}).`,
      ),
      h('p', {}, 'Shortly before, its agent was shown:'),
      h(
        'ul',
        {},
        confirmation.preceded.map((line) => h('li', {}, line)),
      ),
      h(
        'p',
        { class: 'muted' },
        `${confirmation.id}, asked ${when(confirmation.createdAt)}, expires ${when(confirmation.expiresAt)}`,
      ),
      h(
        'div',
        { class: 'actions' },
        h(
          'button',
          { type: 'button', onclick: () => void decide(confirmation, true) },
          `Approve ${confirmation.id}`,
        ),
        h(
          'button',
          { type: 'button', class: 'danger', onclick: () => void decide(confirmation, false) },
          `Decline ${confirmation.id}`,
        ),
      ),
    );
  }

  async function load(): Promise<void> {
    const { confirmations } = await api<{ confirmations: Confirmation[] }>('GET', '/confirmations');
    section.replaceChildren(
      h('h2', { id: 'confirmations-title' }, 'Waiting for confirmation'),
      status,
      confirmations.length === 0
        ? h(
            'p',
            {},
            'Nothing is waiting: no agent asked to do something risky after reading suspicious content.',
          )
        : h('ul', { class: 'confirmations' }, confirmations.map(item)),
    );
  }

  await load();
  return section;
}
