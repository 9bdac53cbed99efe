import { api, setCsrf } from '../api.ts';
import { h, notice } from '../dom.ts';

/** A finished sign-in, or — with two-step sign-in on — the challenge that waits for a code. */
type SignInAnswer = { csrfToken: string } | { totpRequired: true; challenge: string };

/**
 * The second step of a sign-in: a code from the authenticator app (or a recovery code) with
 * the challenge the password step returned. A wrong code can be retried; after five minutes the
 * challenge expires and the sign-in starts over.
 */
function askForCode(root: HTMLElement, challenge: string, done: () => void): void {
  const status = h('div', { 'aria-live': 'polite' });
  const code = h('input', {
    id: 'totp-code',
    name: 'code',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    maxlength: '32',
    required: true,
  });
  const form = h(
    'form',
    { class: 'card auth', 'aria-labelledby': 'auth-title' },
    h('h1', { id: 'auth-title' }, 'Calgate'),
    h('p', {}, 'Two-step sign-in is on for this account.'),
    h('label', { for: 'totp-code' }, 'Code from your authenticator app, or a recovery code'),
    code,
    status,
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'submit' }, 'Verify'),
      h(
        'button',
        { type: 'button', class: 'secondary', onclick: () => void renderAuth(root, done) },
        'Start over',
      ),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    status.replaceChildren();
    void (async () => {
      try {
        const answer = await api<{ csrfToken: string }>('POST', '/auth/signin/totp', {
          challenge,
          code: code.value,
        });
        setCsrf(answer.csrfToken);
        done();
      } catch (error) {
        code.value = '';
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
        code.focus();
      }
    })();
  });
  root.replaceChildren(h('main', { id: 'main' }, form));
  code.focus();
}

/** Sign in, or create the owner account on a fresh install. */
export async function renderAuth(root: HTMLElement, done: () => void): Promise<void> {
  const status = h('div', { 'aria-live': 'polite' });
  const email = h('input', {
    id: 'email',
    name: 'email',
    type: 'email',
    autocomplete: 'username',
    required: true,
  });
  const password = h('input', {
    id: 'password',
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    minlength: '12',
    required: true,
  });
  const workspace = h('input', {
    id: 'workspace',
    name: 'tenantName',
    autocomplete: 'organization',
    maxlength: '100',
  });
  async function submit(mode: 'signin' | 'signup'): Promise<void> {
    status.replaceChildren();
    try {
      const answer = await api<SignInAnswer>('POST', `/auth/${mode}`, {
        email: email.value,
        password: password.value,
        ...(mode === 'signup' && workspace.value.trim() !== '' ? { tenantName: workspace.value.trim() } : {}),
      });
      if ('totpRequired' in answer) {
        askForCode(root, answer.challenge, done);
        return;
      }
      setCsrf(answer.csrfToken);
      done();
    } catch (error) {
      status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
    }
  }
  const form = h(
    'form',
    { class: 'card auth', 'aria-labelledby': 'auth-title' },
    h('h1', { id: 'auth-title' }, 'Calgate'),
    h('p', {}, 'Sign in to manage calendar access for your agents. New install? Create the owner account.'),
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password (at least 12 characters)'),
    password,
    h(
      'details',
      {},
      h('summary', {}, 'Setting up a new install?'),
      h('p', {}, 'The first account owns this Calgate. Name its workspace, then choose Create account.'),
      h('label', { for: 'workspace' }, 'Workspace name (optional)'),
      workspace,
    ),
    status,
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'submit' }, 'Sign in'),
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: () => {
            if (form.reportValidity()) {
              void submit('signup');
            }
          },
        },
        'Create account',
      ),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void submit('signin');
  });
  root.replaceChildren(h('main', { id: 'main' }, form));
  email.focus();
}
