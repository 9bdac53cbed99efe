/** The HTML of the consent screen and of the error screens the authorization endpoint shows. */
import type { OAuthClientRecord, UserAccount } from '../state.ts';

export const CONSENT_PATH = '/o/oauth2/v2/auth/consent';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;color:#202124}
label{display:block;padding:.5rem;border:1px solid #dadce0;border-radius:.5rem;margin:.5rem 0}
button{margin-right:.5rem;padding:.5rem 1.25rem}</style></head>
<body>${body}</body></html>`;

const G = 'https://www.googleapis.com/auth/';

/** What Google's consent screen says for the scopes Calgate and its tests ask for. */
const SCOPE_TEXT: Record<string, string> = {
  [`${G}calendar`]: 'See, edit, share, and permanently delete all the calendars you can access',
  [`${G}calendar.readonly`]: 'See and download any calendar you can access',
  [`${G}calendar.events`]: 'View and edit events on all your calendars',
  [`${G}calendar.events.readonly`]: 'View events on all your calendars',
  [`${G}calendar.events.freebusy`]: 'See the availability on calendars you have access to',
  [`${G}calendar.freebusy`]: 'See your availability',
  [`${G}userinfo.email`]: 'See your primary Google Account email address',
  openid: 'Associate you with your personal info on Google',
};

export function consentPage(
  client: OAuthClientRecord,
  accounts: UserAccount[],
  params: Record<string, string>,
  scopes: string[],
  alreadyGranted: readonly string[] = [],
): string {
  const hint = params.login_hint;
  const hidden = Object.entries(params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const choices = accounts
    .map((account, i) => {
      const checked = hint ? account.email === hint : i === 0;
      return `<label><input type="radio" name="account" value="${escapeHtml(account.email)}"${checked ? ' checked' : ''}>
${escapeHtml(account.name)} &lt;${escapeHtml(account.email)}&gt;</label>`;
    })
    .join('\n');
  const scopeList = scopes
    .map(
      (s) =>
        `<li data-scope="${escapeHtml(s)}">${escapeHtml(SCOPE_TEXT[s] ?? s)} <code>${escapeHtml(s)}</code>${
          alreadyGranted.includes(s) ? ' (already granted)' : ''
        }</li>`,
    )
    .join('');
  const kept = alreadyGranted.filter((s) => !scopes.includes(s));
  const keptNote =
    kept.length > 0
      ? `<p>You already granted: ${kept.map((s) => `<code>${escapeHtml(s)}</code>`).join(', ')}</p>`
      : '';
  return page(
    'Sign in - Google Accounts',
    `<h1>Choose an account</h1>
<p>to continue to <strong>${escapeHtml(client.name)}</strong></p>
<form method="post" action="${CONSENT_PATH}">
${hidden}
${choices || '<p>No accounts are seeded.</p>'}
<p>${escapeHtml(client.name)} wants to access your Google Account:</p>
<ul aria-label="Requested scopes">${scopeList}</ul>
${keptNote}
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Cancel</button>
</form>`,
  );
}

export function errorPage(code: number, error: string, detail: string): string {
  return page(
    `Error ${code}: ${error}`,
    `<h1>Access blocked: authorization error</h1><p><strong>Error ${code}: ${escapeHtml(error)}</strong></p><p>${escapeHtml(detail)}</p>`,
  );
}
