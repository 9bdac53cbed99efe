import { api, setCsrf } from '../api.ts';
import { h, notice } from '../dom.ts';

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
      const answer = await api<{ csrfToken: string }>('POST', `/auth/${mode}`, {
        email: email.value,
        password: password.value,
        ...(mode === 'signup' && workspace.value.trim() !== '' ? { tenantName: workspace.value.trim() } : {}),
      });
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
