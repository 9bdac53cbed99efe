import { ApiError, api, setCsrf } from '../api.ts';
import { h, notice } from '../dom.ts';
import { browserTimeZone, zonePicker } from '../zone-picker.ts';

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

/** Shared by both forms: the email and password fields. */
function credentials(autocomplete: 'current-password' | 'new-password') {
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
    autocomplete,
    minlength: '12',
    required: true,
  });
  return { email, password };
}

/** Signs in with what a form's submit returned, or asks for the two-step code. */
function finish(root: HTMLElement, answer: SignInAnswer, done: () => void): void {
  if ('totpRequired' in answer) {
    askForCode(root, answer.challenge, done);
    return;
  }
  setCsrf(answer.csrfToken);
  done();
}

/** Whether no one has signed up yet; false when that cannot be told either. */
async function stillFirstRun(): Promise<boolean> {
  try {
    return (await api<{ firstRun: boolean }>('GET', '/auth/first-run')).firstRun;
  } catch {
    return false;
  }
}

/**
 * A brand-new install's first screen: the owner account, the workspace's name and the time zone
 * every key answers in unless it has its own (prefilled from the browser). On an install that
 * `calgate start` set up, the first-run calendar moves to that zone.
 */
function renderFirstRun(root: HTMLElement, done: () => void): void {
  const status = h('div', { 'aria-live': 'polite' });
  const { email, password } = credentials('new-password');
  const workspace = h('input', {
    id: 'workspace',
    name: 'tenantName',
    autocomplete: 'organization',
    maxlength: '100',
    placeholder: 'My Calgate',
  });
  const zone = zonePicker({ id: 'time-zone', value: browserTimeZone() });
  const submit = h('button', { type: 'submit' }, 'Create account');
  const form = h(
    'form',
    { class: 'card auth', 'aria-labelledby': 'auth-title' },
    h('h1', { id: 'auth-title' }, 'Set up Calgate'),
    h(
      'p',
      {},
      'Create the owner account of this Calgate. Agents read and write times in the workspace’s time zone unless a key has its own.',
    ),
    h('label', { for: 'workspace' }, 'Workspace name'),
    workspace,
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password (at least 12 characters)'),
    password,
    h('label', { for: 'time-zone' }, 'Time zone'),
    zone.element,
    status,
    h('div', { class: 'row' }, submit),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    // Sent once: a second press (a double click, Enter again) would only meet the closed sign-up.
    if (submit.disabled) {
      return;
    }
    submit.disabled = true;
    status.replaceChildren();
    void (async () => {
      try {
        const answer = await api<SignInAnswer>('POST', '/auth/signup', {
          email: email.value,
          password: password.value,
          ...(workspace.value.trim() === '' ? {} : { tenantName: workspace.value.trim() }),
          timeZone: zone.value() ?? browserTimeZone(),
        });
        finish(root, answer, done);
      } catch (error) {
        // Someone else created the owner meanwhile: sign in instead. Any other refusal (such as
        // a page opened under an address Calgate does not accept) is shown here, on this form.
        if (error instanceof ApiError && error.status === 403 && !(await stillFirstRun())) {
          renderSignIn(root, done, error.message, email.value);
          return;
        }
        submit.disabled = false;
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  root.replaceChildren(h('main', { id: 'main' }, form));
  document.title = 'Set up · Calgate';
  workspace.focus();
}

/**
 * Sign in with email and password (then a code, when two-step sign-in is on). `note` and `typed`
 * come from a create-owner form that lost to another: why, and the email it had.
 */
function renderSignIn(root: HTMLElement, done: () => void, note?: string, typed?: string): void {
  const status = h('div', { 'aria-live': 'polite' }, note === undefined ? null : notice(note));
  const { email, password } = credentials('current-password');
  email.value = typed ?? '';
  const form = h(
    'form',
    { class: 'card auth', 'aria-labelledby': 'auth-title' },
    h('h1', { id: 'auth-title' }, 'Calgate'),
    h(
      'p',
      {},
      'Sign in to manage calendar access for your agents. To join this Calgate, ask an owner or admin for an invitation link.',
    ),
    h('label', { for: 'email' }, 'Email'),
    email,
    h('label', { for: 'password' }, 'Password (at least 12 characters)'),
    password,
    status,
    h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Sign in')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    status.replaceChildren();
    void (async () => {
      try {
        const answer = await api<SignInAnswer>('POST', '/auth/signin', {
          email: email.value,
          password: password.value,
        });
        finish(root, answer, done);
      } catch (error) {
        status.replaceChildren(notice(error instanceof Error ? error.message : String(error), 'error'));
      }
    })();
  });
  root.replaceChildren(h('main', { id: 'main' }, form));
  (typed === undefined ? email : password).focus();
}

/** Sign in; on a brand-new install (no one has signed up yet), create the owner account instead. */
export async function renderAuth(root: HTMLElement, done: () => void): Promise<void> {
  const { firstRun } = await api<{ firstRun: boolean }>('GET', '/auth/first-run');
  if (firstRun) {
    renderFirstRun(root, done);
    return;
  }
  renderSignIn(root, done);
}
