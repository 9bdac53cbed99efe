import { api, setCsrf } from '../api.ts';
import { h, notice } from '../dom.ts';

interface InvitationView {
  email: string;
  role: string;
  tenant: { name: string };
}

function tokenFromUrl(): string {
  return new URLSearchParams(location.search).get('token') ?? '';
}

/** A "choose a password" form (≥ 12 characters) that posts `{ token, password }` and signs in. */
function passwordForm(options: {
  title: string;
  intro: (HTMLElement | string)[];
  button: string;
  path: string;
  done: () => void;
}): HTMLElement {
  const status = h('div', { 'aria-live': 'polite' });
  const password = h('input', {
    id: 'new-password',
    name: 'password',
    type: 'password',
    autocomplete: 'new-password',
    minlength: '12',
    required: true,
  });
  const form = h(
    'form',
    { class: 'card auth', 'aria-labelledby': 'link-title' },
    h('h1', { id: 'link-title' }, options.title),
    ...options.intro,
    h('label', { for: 'new-password' }, 'New password (at least 12 characters)'),
    password,
    status,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, options.button)),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    status.replaceChildren();
    void (async () => {
      try {
        const answer = await api<{ csrfToken: string }>('POST', options.path, {
          token: tokenFromUrl(),
          password: password.value,
        });
        setCsrf(answer.csrfToken);
        options.done();
      } catch (error) {
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  return form;
}

/** /invite?token=…: who invited whom to which workspace, then a password, then signed in. */
export async function renderInvite(root: HTMLElement, done: () => void): Promise<void> {
  document.title = 'Join a workspace · Calgate';
  let invitation: InvitationView;
  try {
    invitation = await api<InvitationView>(
      'GET',
      `/invitations/lookup?token=${encodeURIComponent(tokenFromUrl())}`,
    );
  } catch (error) {
    root.replaceChildren(
      h(
        'main',
        { id: 'main' },
        h(
          'div',
          { class: 'card auth' },
          h('h1', {}, 'Invitation'),
          notice(String(error instanceof Error ? error.message : error), 'error'),
          h('a', { href: '/' }, 'Go to sign-in'),
        ),
      ),
    );
    return;
  }
  const form = passwordForm({
    title: `Join ${invitation.tenant.name}`,
    intro: [
      h('p', {}, `You are invited to ${invitation.tenant.name} on Calgate as ${invitation.role}.`),
      h('p', {}, 'Email: ', h('strong', { class: 'invite-email' }, invitation.email)),
    ],
    button: 'Join and sign in',
    path: '/invitations/accept',
    done,
  });
  root.replaceChildren(h('main', { id: 'main' }, form));
}

/** /reset?token=…: a new password; it signs out every other session and signs in here. */
export async function renderReset(root: HTMLElement, done: () => void): Promise<void> {
  document.title = 'Reset password · Calgate';
  const form = passwordForm({
    title: 'Set a new password',
    intro: [h('p', {}, 'Setting it signs you out everywhere else.')],
    button: 'Set password and sign in',
    path: '/auth/reset',
    done,
  });
  root.replaceChildren(h('main', { id: 'main' }, form));
}
