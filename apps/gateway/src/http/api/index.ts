import type { FastifyInstance } from 'fastify';
import { registerAccountRoutes } from './accounts.ts';
import { registerAuditRoutes } from './audit.ts';
import { registerConfirmationRoutes } from './confirmations.ts';
import { registerConnectedAppRoutes } from './connected-apps.ts';
import type { ApiDeps } from './deps.ts';
import { registerFeedRoutes } from './feeds.ts';
import { registerKeyRoutes } from './keys.ts';
import { registerMatrixRoutes } from './matrix.ts';
import { registerOverviewRoutes } from './overview.ts';
import { registerPeopleRoutes } from './people.ts';
import { registerRulesRoutes } from './rules.ts';
import { registerSessionRoutes } from './sessions.ts';
import { registerTotpRoutes } from './totp.ts';
import { registerWorkspaceRoutes } from './workspace.ts';

export type { ApiDeps } from './deps.ts';
export { DashboardGuard } from './guard.ts';

/** The dashboard's REST API under /api/v1 (besides connections, in dashboard-api.ts). */
export function registerApi(app: FastifyInstance, deps: ApiDeps): void {
  registerAccountRoutes(app, deps);
  registerSessionRoutes(app, deps);
  registerTotpRoutes(app, deps);
  registerOverviewRoutes(app, deps);
  registerKeyRoutes(app, deps);
  registerConfirmationRoutes(app, deps);
  registerConnectedAppRoutes(app, deps);
  registerMatrixRoutes(app, deps);
  registerAuditRoutes(app, deps);
  registerRulesRoutes(app, deps);
  registerPeopleRoutes(app, deps);
  registerWorkspaceRoutes(app, deps);
  registerFeedRoutes(app, deps);
}
