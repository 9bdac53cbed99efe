import { api } from '../api.ts';
import { confirmDialog, copyButton, h, notice, when } from '../dom.ts';

type Role = 'owner' | 'admin' | 'member' | 'auditor';

interface Member {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}

interface Invitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string;
}

interface People {
  members: Member[];
  invitations: Invitation[];
  you: { id: string; role: Role };
}

const ROLE_TEXT: Record<Role, string> = {
  owner: 'Owner — everything, including people and owners',
  admin: 'Admin — everything but owners',
  member: 'Member — own keys and apps, read the rest',
  auditor: 'Auditor — read only',
};

/** The roles `you` may hand out: admins cannot make owners. */
function assignable(you: Role): Role[] {
  return you === 'owner' ? ['owner', 'admin', 'member', 'auditor'] : ['admin', 'member', 'auditor'];
}

function roleSelect(id: string, roles: Role[], selected: Role, label: string): HTMLSelectElement {
  return h(
    'select',
    { id, 'aria-label': label },
    roles.map((role) =>
      h('option', { value: role, ...(role === selected ? { selected: true } : {}) }, ROLE_TEXT[role]),
    ),
  );
}

/**
 * The people of this workspace: everyone sees the list; owners and admins change roles, remove
 * people (their keys and apps are revoked with them) and invite by email. Without SMTP the
 * invitation link is shown to pass on.
 */
export async function renderMembers(root: HTMLElement): Promise<void> {
  const data = await api<People>('GET', '/members');
  const manages = data.you.role === 'owner' || data.you.role === 'admin';
  const status = h('div', { 'aria-live': 'polite' });
  const reload = async () => {
    root.querySelector('.members-body')?.remove();
    await renderMembers(root);
  };

  const rows = data.members.map((member) => {
    const mayTouch =
      manages && member.id !== data.you.id && (data.you.role === 'owner' || member.role !== 'owner');
    const cell = mayTouch
      ? roleSelect(`role-${member.id}`, assignable(data.you.role), member.role, `Role of ${member.email}`)
      : h('span', {}, member.role);
    if (cell instanceof HTMLSelectElement) {
      cell.addEventListener('change', () => {
        void (async () => {
          try {
            await api('PATCH', `/members/${member.id}`, { role: cell.value });
            status.replaceChildren(notice(`${member.email} is now ${cell.value}.`));
          } catch (error) {
            cell.value = member.role;
            status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
          }
        })();
      });
    }
    const remove = mayTouch
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: () =>
              void (async () => {
                const ok = await confirmDialog({
                  question: `Remove ${member.email}?`,
                  detail: `${member.email} is signed out at once; the API keys they created and the apps they connected are revoked.`,
                  confirm: 'Remove person',
                  danger: true,
                });
                if (!ok) {
                  return;
                }
                try {
                  await api('DELETE', `/members/${member.id}`);
                  await reload();
                } catch (error) {
                  status.replaceChildren(
                    notice(error instanceof Error ? error.message : String(error), 'error'),
                  );
                }
              })(),
          },
          'Remove',
        )
      : null;
    return h(
      'tr',
      {},
      h('td', {}, member.email, member.id === data.you.id ? ' (you)' : ''),
      h('td', {}, cell),
      h('td', {}, when(member.createdAt)),
      manages ? h('td', {}, remove) : null,
    );
  });

  const table = h(
    'table',
    {},
    h('caption', {}, 'People'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'Email'),
        h('th', {}, 'Role'),
        h('th', {}, 'Joined'),
        manages ? h('th', {}, 'Actions') : null,
      ),
    ),
    h('tbody', {}, rows),
  );

  const body = h('div', { class: 'members-body' }, status, table);
  if (manages) {
    body.append(pendingList(data.invitations, status, reload), inviteForm(data.you.role, reload));
  }
  root.append(body);
}

function pendingList(
  invitations: Invitation[],
  status: HTMLElement,
  reload: () => Promise<void>,
): HTMLElement {
  if (invitations.length === 0) {
    return h('p', {}, 'No pending invitations.');
  }
  return h(
    'section',
    { 'aria-labelledby': 'pending-title' },
    h('h2', { id: 'pending-title' }, 'Pending invitations'),
    h(
      'ul',
      {},
      invitations.map((invitation) =>
        h(
          'li',
          {},
          `${invitation.email} as ${invitation.role}, until ${when(invitation.expiresAt)} `,
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () =>
                void api('POST', `/invitations/${invitation.id}/revoke`)
                  .then(reload)
                  .catch((error: unknown) => status.replaceChildren(notice(String(error), 'error'))),
            },
            `Revoke invitation for ${invitation.email}`,
          ),
        ),
      ),
    ),
  );
}

function inviteForm(you: Role, reload: () => Promise<void>): HTMLElement {
  const email = h('input', { id: 'invite-email', name: 'email', type: 'email', required: true });
  const role = roleSelect('invite-role', assignable(you), 'member', 'Role');
  const result = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'invite-title' },
    h('h2', { id: 'invite-title' }, 'Invite someone'),
    h('label', { for: 'invite-email' }, 'Email'),
    email,
    h('label', { for: 'invite-role' }, 'Role'),
    role,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Invite')),
    result,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      try {
        const answer = await api<{ link: string; sent: boolean; mailError?: string }>(
          'POST',
          '/invitations',
          {
            email: email.value,
            role: role.value,
          },
        );
        const to = email.value;
        await reload();
        const shown = answer.sent
          ? notice(`Invitation sent to ${to}.`)
          : h(
              'div',
              { class: 'notice info', role: 'status' },
              h('p', {}, answer.mailError ?? `Pass this link on to ${to} (it works once, for 7 days):`),
              h('code', { class: 'invite-link' }, answer.link),
              ' ',
              copyButton(answer.link, 'Copy invitation link'),
            );
        document.querySelector('.members-body')?.prepend(shown);
      } catch (error) {
        result.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  return form;
}
