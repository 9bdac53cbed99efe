import { api, setCsrf } from '../api.ts';
import { copyButton, h, notice, when } from '../dom.ts';

interface SessionItem {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  /** Browser and system, e.g. "Firefox 133 on Linux"; null when the sign-in sent none. */
  client: string | null;
  ip: string | null;
  current: boolean;
}

interface TotpStatus {
  enabled: boolean;
  allowed: boolean;
  recoveryCodesLeft: number;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The code input shared by the set-up and switch-off forms. */
function codeInput(id: string): HTMLInputElement {
  return h('input', {
    id,
    name: 'code',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    maxlength: '32',
    required: true,
  });
}

/**
 * "Two-step sign-in": set up (secret and otpauth URI shown once, confirmed with a code), the
 * recovery codes shown once, and switching it off with the password and a code.
 */
async function renderTwoStep(section: HTMLElement, note?: string): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' }, note === undefined ? null : notice(note));
  const body = h('div', {});
  section.replaceChildren(
    h('h2', { id: 'two-step-title' }, 'Two-step sign-in'),
    h(
      'p',
      {},
      'With two-step sign-in on, signing in asks for a 6-digit code from an authenticator app after the password.',
    ),
    body,
    status,
  );
  const state = await api<TotpStatus>('GET', '/account/totp');

  function fail(error: unknown): void {
    status.replaceChildren(notice(message(error), 'error'));
  }

  function showRecoveryCodes(codes: string[]): void {
    body.replaceChildren(
      notice('Two-step sign-in is on.'),
      h(
        'p',
        {},
        'Keep these recovery codes somewhere safe. Each signs you in once without the app. They are shown only now.',
      ),
      h(
        'ul',
        { class: 'plain', 'aria-label': 'Recovery codes' },
        codes.map((code) => h('li', {}, h('code', {}, code))),
      ),
      h(
        'div',
        { class: 'row' },
        copyButton(codes.join('\n'), 'Copy recovery codes'),
        h('button', { type: 'button', onclick: () => void renderTwoStep(section) }, 'Done'),
      ),
    );
  }

  async function startSetup(): Promise<void> {
    status.replaceChildren();
    let setup: { secret: string; otpauthUri: string };
    try {
      setup = await api<{ secret: string; otpauthUri: string }>('POST', '/account/totp/setup');
    } catch (error) {
      fail(error);
      return;
    }
    const code = codeInput('totp-setup-code');
    const form = h(
      'form',
      { 'aria-label': 'Confirm two-step sign-in' },
      h('p', {}, 'Add this account to your authenticator app with the secret key or the setup link:'),
      h(
        'p',
        {},
        'Secret key: ',
        h('code', { id: 'totp-secret' }, setup.secret),
        ' ',
        copyButton(setup.secret, 'Copy secret key'),
      ),
      h('p', { class: 'pre' }, 'Setup link: ', h('code', { id: 'totp-uri' }, setup.otpauthUri)),
      h('label', { for: 'totp-setup-code' }, 'Code from your app'),
      code,
      h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Turn on')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      status.replaceChildren();
      void (async () => {
        try {
          const answer = await api<{ recoveryCodes: string[] }>('POST', '/account/totp/confirm', {
            code: code.value,
          });
          showRecoveryCodes(answer.recoveryCodes);
        } catch (error) {
          fail(error);
        }
      })();
    });
    body.replaceChildren(form);
    code.focus();
  }

  if (state.enabled) {
    const password = h('input', {
      id: 'totp-off-password',
      name: 'password',
      type: 'password',
      autocomplete: 'current-password',
      required: true,
    });
    const code = codeInput('totp-off-code');
    const form = h(
      'form',
      { 'aria-label': 'Turn off two-step sign-in' },
      h('label', { for: 'totp-off-password' }, 'Password'),
      password,
      h('label', { for: 'totp-off-code' }, 'Code from your app, or a recovery code'),
      code,
      h('div', { class: 'row' }, h('button', { type: 'submit', class: 'danger' }, 'Turn off')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      status.replaceChildren();
      void (async () => {
        try {
          await api('POST', '/account/totp/disable', { password: password.value, code: code.value });
          await renderTwoStep(section, 'Two-step sign-in is off.');
        } catch (error) {
          fail(error);
        }
      })();
    });
    const left = state.recoveryCodesLeft;
    body.replaceChildren(
      notice(
        `Two-step sign-in is on. ${left === 1 ? '1 recovery code is' : `${left} recovery codes are`} left.`,
      ),
      form,
    );
  } else if (!state.allowed) {
    body.replaceChildren(h('p', {}, 'Two-step sign-in is for owners and admins.'));
  } else {
    body.replaceChildren(
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'button', onclick: () => void startSetup() }, 'Set up two-step sign-in'),
      ),
    );
  }
}

/** The signed-in user's sessions, two-step sign-in and a password change. */
export async function renderAccount(root: HTMLElement): Promise<void> {
  const sessionsStatus = h('div', { 'aria-live': 'polite' });
  const sessionList = h('div', {});
  const passwordStatus = h('div', { 'aria-live': 'polite' });
  const twoStep = h('section', { class: 'card', 'aria-labelledby': 'two-step-title' });

  async function signOut(session: SessionItem): Promise<void> {
    sessionsStatus.replaceChildren();
    try {
      await api('POST', `/sessions/${session.id}/revoke`);
      if (session.current) {
        setCsrf('');
        location.assign('/');
        return;
      }
      await loadSessions();
      sessionsStatus.replaceChildren(notice('That session is signed out.'));
    } catch (error) {
      sessionsStatus.replaceChildren(notice(message(error), 'error'));
    }
  }

  async function loadSessions(): Promise<void> {
    const { sessions } = await api<{ sessions: SessionItem[] }>('GET', '/sessions');
    sessionList.replaceChildren(
      h(
        'ul',
        { class: 'plain', 'aria-label': 'Signed-in sessions' },
        sessions.map((session) => {
          const from = [session.client ?? 'Unknown browser', session.ip].filter(Boolean).join(', ');
          return h(
            'li',
            { class: 'row' },
            h(
              'span',
              {},
              h('strong', {}, from),
              session.current ? ' (this browser)' : null,
              ` — signed in ${when(session.createdAt)}, last seen ${when(session.lastSeenAt)}, ends ${when(session.expiresAt)}`,
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                'aria-label': session.current ? 'Sign out this browser' : `Sign out ${from}`,
                onclick: () => void signOut(session),
              },
              'Sign out',
            ),
          );
        }),
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
        'A session ends at the time shown, or sooner when it signs out. Sign out any one of them here; signing out everywhere ends every session of your account at once, this one included.',
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
    twoStep,
    form,
  );
  await Promise.all([loadSessions(), renderTwoStep(twoStep)]);
}
