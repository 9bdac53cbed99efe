import { api, setCsrf } from '../api.ts';
import { h, notice, when } from '../dom.ts';

interface SessionItem {
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  current: boolean;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The signed-in user's sessions (sign out everywhere) and a password change. */
export async function renderAccount(root: HTMLElement): Promise<void> {
  const sessionsStatus = h('div', { 'aria-live': 'polite' });
  const sessionList = h('div', {});
  const passwordStatus = h('div', { 'aria-live': 'polite' });

  async function loadSessions(): Promise<void> {
    const { sessions } = await api<{ sessions: SessionItem[] }>('GET', '/sessions');
    sessionList.replaceChildren(
      h(
        'ul',
        { class: 'plain', 'aria-label': 'Signed-in sessions' },
        sessions.map((session) =>
          h(
            'li',
            {},
            `Signed in ${when(session.createdAt)}, last seen ${when(session.lastSeenAt)}, ends ${when(session.expiresAt)}`,
            session.current ? h('strong', {}, ' (this browser)') : null,
          ),
        ),
      ),
    );
  }

  async function signOutEverywhere(): Promise<void> {
    sessionsStatus.replaceChildren();
    try {
      await api('POST', '/sessions/revoke-all');
      setCsrf('');
      location.assign('/');
    } catch (error) {
      sessionsStatus.replaceChildren(notice(message(error), 'error'));
    }
  }

  const current = h('input', {
    id: 'current-password',
    name: 'currentPassword',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
  });
  const next = h('input', {
    id: 'new-password',
    name: 'newPassword',
    type: 'password',
    autocomplete: 'new-password',
    minlength: '12',
    required: true,
  });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'password-title' },
    h('h2', { id: 'password-title' }, 'Change password'),
    h('p', {}, 'Every other session is signed out; this one stays signed in.'),
    h('label', { for: 'current-password' }, 'Current password'),
    current,
    h('label', { for: 'new-password' }, 'New password (at least 12 characters)'),
    next,
    passwordStatus,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Change password')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    passwordStatus.replaceChildren();
    void (async () => {
      try {
        const answer = await api<{ otherSessionsSignedOut: number }>('POST', '/account/password', {
          currentPassword: current.value,
          newPassword: next.value,
        });
        form.reset();
        const others = answer.otherSessionsSignedOut;
        passwordStatus.replaceChildren(
          notice(
            `Password changed. ${others === 1 ? '1 other session was' : `${others} other sessions were`} signed out.`,
          ),
        );
        await loadSessions();
      } catch (error) {
        passwordStatus.replaceChildren(notice(message(error), 'error'));
      }
    })();
  });

  root.append(
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'sessions-title' },
      h('h2', { id: 'sessions-title' }, 'Sessions'),
      h(
        'p',
        {},
        'A session ends at the time shown, or sooner when it signs out. Signing out everywhere ends every session of your account at once, this one included.',
      ),
      sessionList,
      sessionsStatus,
      h(
        'div',
        { class: 'row' },
        h(
          'button',
          { type: 'button', class: 'danger', onclick: () => void signOutEverywhere() },
          'Sign out everywhere',
        ),
      ),
    ),
    form,
  );
  await loadSessions();
}
