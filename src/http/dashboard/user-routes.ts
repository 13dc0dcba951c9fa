import { auditForDashboard } from '../../app/dashboard-audit.ts';
import { pointsFor } from '../../app/dashboard-points.ts';
import { inviteUser, setUserActiveFromDashboard, usersForDashboard } from '../../app/dashboard-users.ts';
import { bodyOf, client, field, fields, flag, redirect, sendPage, type DashboardKit } from './kit.ts';
import * as pages from './pages.ts';

// Users (invite, disable) and the audit log.

export function userRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf, acting } = kit;
  const common = deps.common;

  routes.add('GET', '/users', async (req, reply) => {
    const p = await principalOf(req);
    return sendPage(reply, 200, pages.usersPage(layout('Users', p, p.csrfToken), await usersForDashboard(common, p), await pointsFor(common, p), null));
  });

  routes.add('POST', '/api/users', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const invited = await inviteUser(common, p, { email: field(body, 'email'), role: field(body, 'role'), pointIds: fields(body, 'points') }, client(req));
    return sendPage(reply, 201, pages.usersPage(layout('Users', p, p.csrfToken), await usersForDashboard(common, p), await pointsFor(common, p), { email: invited.user.email, link: invited.setupLink }));
  });

  routes.add('POST', '/api/users/:id/active', async (req, reply) => {
    const p = await acting(req);
    const { id } = req.params as { id: string };
    await setUserActiveFromDashboard(common, p, id, flag(bodyOf(req), 'active'), client(req));
    return redirect(reply, '/dashboard/users');
  });

  routes.add('GET', '/audit', async (req, reply) => {
    const p = await principalOf(req);
    return sendPage(reply, 200, pages.auditPage(layout('Audit log', p, p.csrfToken), await auditForDashboard(common, p)));
  });
}
