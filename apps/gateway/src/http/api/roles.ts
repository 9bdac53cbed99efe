import type { Role } from '@calgate/store';

/**
 * Who may call which dashboard route. The guard looks every request up here by method and route
 * pattern (Fastify's `routeOptions.url`), so a route added later without an entry still gets the
 * safe default: reads for every role, writes for owners and admins.
 *
 * Finer rules that depend on the target (members and their own keys, admins and owners) are
 * `own` checks run by the guard, or checks in people.ts where the body decides (the new role).
 */
export interface RoutePolicy {
  roles: readonly Role[];
  /** Members pass only for an API key they created ('key') or an app they approved ('app'). */
  own?: 'key' | 'app';
  /** What the route does, for refusals: "Members cannot {what}". */
  what: string;
}

const EVERYONE: readonly Role[] = ['owner', 'admin', 'member', 'auditor'];
const MANAGERS: readonly Role[] = ['owner', 'admin'];
const WORKERS: readonly Role[] = ['owner', 'admin', 'member'];

/** Routes that need no session at all (sign-in, sign-up and the links sent by e-mail). */
export const PUBLIC_ROUTES: readonly string[] = [
  'POST /api/v1/auth/signup',
  'GET /api/v1/auth/first-run',
  'POST /api/v1/auth/signin',
  'POST /api/v1/auth/signin/totp',
  'GET /api/v1/invitations/lookup',
  'POST /api/v1/invitations/accept',
  'POST /api/v1/auth/reset',
];

/** Writes that are not the default (owners and admins only). */
const POLICY: Record<string, RoutePolicy> = {
  // One's own session and password: every role, auditors too.
  'POST /api/v1/auth/signout': { roles: EVERYONE, what: 'sign out' },
  'POST /api/v1/sessions/revoke-all': { roles: EVERYONE, what: 'end their own sessions' },
  'POST /api/v1/sessions/:id/revoke': { roles: EVERYONE, what: 'end their own sessions' },
  // Someone demoted to member can still turn off the two-step sign-in they set up as an owner.
  'POST /api/v1/account/totp/disable': { roles: EVERYONE, what: 'turn off their own two-step sign-in' },
  'POST /api/v1/account/password': { roles: EVERYONE, what: 'change their own password' },
  // Two-step sign-in (account/totp/*) is for owners and admins: the default for writes.
  // Consent: consent.ts refuses Write for members; auditors approve nothing.
  'POST /api/v1/oauth/consent': { roles: WORKERS, what: 'connect apps' },
  // A preview computes and changes nothing.
  'POST /api/v1/rules/preview': { roles: EVERYONE, what: 'preview rules' },
  // Keys: members create keys and manage the ones they created.
  'POST /api/v1/keys': { roles: WORKERS, what: 'create API keys' },
  'PATCH /api/v1/keys/:id': { roles: WORKERS, own: 'key', what: 'change the defaults of' },
  'POST /api/v1/keys/:id/revoke': { roles: WORKERS, own: 'key', what: 'revoke' },
  'POST /api/v1/keys/:id/rotate': { roles: WORKERS, own: 'key', what: 'rotate' },
  'POST /api/v1/keys/:id/test-call': { roles: WORKERS, own: 'key', what: 'send a test call with' },
  'POST /api/v1/connected-apps/:id/revoke': { roles: WORKERS, own: 'app', what: 'disconnect' },
  'PATCH /api/v1/connected-apps/:id': { roles: WORKERS, own: 'app', what: 'change the hijack policy of' },
  // People: people.ts also keeps admins away from owners.
  'POST /api/v1/invitations': { roles: MANAGERS, what: 'invite people' },
  'POST /api/v1/invitations/:id/revoke': { roles: MANAGERS, what: 'revoke invitations' },
  'PATCH /api/v1/members/:id': { roles: MANAGERS, what: 'change roles' },
  'DELETE /api/v1/members/:id': { roles: MANAGERS, what: 'remove people' },
  'PUT /api/v1/grants': { roles: MANAGERS, what: 'change grants' },
  'POST /api/v1/grants/bulk': { roles: MANAGERS, what: 'change grants' },
  'PATCH /api/v1/workspace': { roles: MANAGERS, what: 'change the workspace settings' },
};

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The policy of a route: its entry, or the default for its method. */
export function policyFor(method: string, url: string): RoutePolicy {
  const listed = POLICY[`${method} ${url}`];
  if (listed !== undefined) {
    return listed;
  }
  return READ_METHODS.has(method)
    ? { roles: EVERYONE, what: 'read this' }
    : { roles: MANAGERS, what: `make this change (${method} ${url})` };
}

const ROLE_NAMES: Record<Role, string> = {
  owner: 'Owners',
  admin: 'Admins',
  member: 'Members',
  auditor: 'Auditors',
};

/** The 403 message for a role the policy leaves out. */
export function refusal(role: Role, policy: RoutePolicy): string {
  const object = policy.own === undefined ? '' : policy.own === 'key' ? ' API keys' : ' apps';
  if (role === 'auditor') {
    return `Auditors have read-only access: they cannot ${policy.what}${policy.own === 'key' ? ' keys' : object}.`;
  }
  return `${ROLE_NAMES[role]} cannot ${policy.what}${object}: ask an owner or admin of this workspace.`;
}

/** The 403 message when a member reaches for a key or app that is not theirs. */
export function notOwn(policy: RoutePolicy): string {
  return policy.own === 'app'
    ? `Members can ${policy.what} only the apps they connected.`
    : `Members can ${policy.what} only the keys they created.`;
}
