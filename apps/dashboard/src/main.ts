import { ApiError, api, loadCsrf, setCsrf } from './api.ts';
import { h, notice } from './dom.ts';
import { renderAccount } from './pages/account.ts';
import { renderAccounts } from './pages/accounts.ts';
import { renderApps } from './pages/apps.ts';
import { renderAudit } from './pages/audit.ts';
import { renderAuth } from './pages/auth.ts';
import { renderConsent } from './pages/consent.ts';
import { renderDeliveries } from './pages/deliveries.ts';
import { renderDocs } from './pages/docs.ts';
import { renderKeys } from './pages/keys.ts';
import { renderInvite, renderReset } from './pages/links.ts';
import { renderMatrix } from './pages/matrix.ts';
import { renderMembers } from './pages/members.ts';
import { renderOverview } from './pages/overview.ts';
import { renderRules } from './pages/rules.ts';
import { renderSchedules } from './pages/schedules.ts';
import { renderTargets } from './pages/targets.ts';

type Page = (root: HTMLElement) => Promise<void>;

/**
 * The router's pages; those with `nav: false` are reached from elsewhere (the header, or an MCP
 * client sending the browser to the consent page). `heading: false`: the page writes its own h1
 * and document title (the consent page names the app asking).
 */
const PAGES: { path: string; title: string; render: Page; nav?: false; heading?: false }[] = [
  { path: '/', title: 'Overview', render: renderOverview },
  { path: '/accounts', title: 'Accounts', render: renderAccounts },
  { path: '/keys', title: 'API keys', render: renderKeys },
  { path: '/apps', title: 'Connected apps', render: renderApps },
  { path: '/matrix', title: 'Permissions', render: renderMatrix },
  { path: '/rules', title: 'Projects & rules', render: renderRules },
  { path: '/schedules', title: 'Schedules', render: renderSchedules },
  { path: '/targets', title: 'Delivery targets', render: renderTargets },
  { path: '/deliveries', title: 'Delivery log', render: renderDeliveries },
  { path: '/audit', title: 'Audit log', render: renderAudit },
  { path: '/members', title: 'Members', render: renderMembers },
  { path: '/docs', title: 'Docs', render: renderDocs },
  { path: '/account', title: 'Your account', render: renderAccount, nav: false },
  { path: '/consent', title: 'Connect an app', render: renderConsent, nav: false, heading: false },
];

interface Me {
  user: { email: string };
  tenant: { name: string };
}

const app = document.getElementById('app') as HTMLElement;

export function navigate(path: string): void {
  history.pushState(null, '', path);
  void route();
}

async function signOut(): Promise<void> {
  await api('POST', '/auth/signout');
  setCsrf('');
  navigate('/');
}

function shell(me: Me, current: string): HTMLElement {
  const links = PAGES.filter((page) => page.nav !== false).map((page) =>
    h(
      'li',
      {},
      h('a', { href: page.path, ...(page.path === current ? { 'aria-current': 'page' } : {}) }, page.title),
    ),
  );
  const main = h('main', { id: 'main', tabindex: '-1' });
  app.replaceChildren(
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h(
      'header',
      {},
      h('strong', { class: 'brand' }, 'Calgate'),
      h('nav', { 'aria-label': 'Main' }, h('ul', {}, links)),
      h(
        'div',
        { class: 'who' },
        h(
          'a',
          {
            href: '/account',
            title: 'Your account: sessions and password',
            ...(current === '/account' ? { 'aria-current': 'page' } : {}),
          },
          `${me.user.email} · ${me.tenant.name}`,
        ),
        h('button', { type: 'button', class: 'secondary', onclick: () => void signOut() }, 'Sign out'),
      ),
    ),
    main,
  );
  return main;
}

/** Pages opened from an e-mailed link: they render without a session and sign in themselves. */
const PUBLIC_PAGES: Record<string, (root: HTMLElement, done: () => void) => Promise<void>> = {
  '/invite': renderInvite,
  '/reset': renderReset,
};

async function route(): Promise<void> {
  const publicPage = PUBLIC_PAGES[location.pathname];
  if (publicPage !== undefined) {
    await publicPage(app, () => navigate('/'));
    return;
  }
  let me: Me;
  try {
    me = await api<Me>('GET', '/auth/me');
    await loadCsrf();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      document.title = 'Sign in · Calgate';
      // The query survives sign-in: the consent page needs its ?request=.
      await renderAuth(app, () => navigate(`${location.pathname}${location.search}`));
      return;
    }
    app.replaceChildren(notice(`Calgate is not reachable: ${String(error)}`, 'error'));
    return;
  }
  const page = PAGES.find((item) => item.path === location.pathname) ?? PAGES[0];
  if (page === undefined) {
    return;
  }
  if (page.path !== location.pathname) {
    // An unknown path shows the overview under its own address.
    history.replaceState(null, '', page.path);
  }
  document.title = `${page.title} · Calgate`;
  const main = shell(me, page.path);
  if (page.heading !== false) {
    main.append(h('h1', {}, page.title));
  }
  try {
    await page.render(main);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      await route();
      return;
    }
    main.append(notice(error instanceof Error ? error.message : String(error), 'error'));
  }
  main.setAttribute('data-ready', 'true');
}

document.addEventListener('click', (event) => {
  const link = (event.target as Element | null)?.closest('a');
  if (link === null || link === undefined || event.ctrlKey || event.metaKey || event.shiftKey) {
    return;
  }
  const url = new URL(link.href, location.href);
  if (url.hash !== '' && url.pathname === location.pathname) {
    return;
  }
  if (url.origin === location.origin && PAGES.some((page) => page.path === url.pathname)) {
    event.preventDefault();
    // The query goes along: /accounts?reconnect=… fills the CalDAV form for that account.
    navigate(`${url.pathname}${url.search}`);
    document.getElementById('main')?.focus();
  }
});
window.addEventListener('popstate', () => void route());
void route();
