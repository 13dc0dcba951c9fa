import type { FastifyInstance } from 'fastify';
import type { DaemonDeps } from '../../app/deps.ts';
import { invoiceListRoutes } from './invoice-list-routes.ts';
import { invoiceDetailRoutes } from './invoice-detail-routes.ts';
import { installDashboard, type DashboardOptions } from './kit.ts';
import { moneyRoutes } from './money-routes.ts';
import { pointRoutes } from './point-routes.ts';
import { reportRoutes } from './report-routes.ts';
import { sessionRoutes } from './session-routes.ts';
import { userRoutes } from './user-routes.ts';
import { webhookRoutes } from './webhook-routes.ts';

// The merchant dashboard (docs/dashboard.md): pages under /dashboard/, form and JSON endpoints under
// /dashboard/api/. Its one credential is the session cookie: an API key or a signature is never
// read here, and the gateway never reads the cookie (spec rule 3). Every state-changing request
// passes the Origin check (a hook) and a CSRF token (per session, or a pre-session cookie for the
// sign-in and set-up forms). Each area's routes are a module given the shared kit.

export async function dashboardPlugin(app: FastifyInstance, deps: DaemonDeps, options: DashboardOptions): Promise<void> {
  const kit = installDashboard(app, deps, options);
  sessionRoutes(kit);
  pointRoutes(kit);
  userRoutes(kit);
  reportRoutes(kit);
  webhookRoutes(kit);
  invoiceListRoutes(kit);
  invoiceDetailRoutes(kit);
  moneyRoutes(kit);
  kit.routes.finish();
}
