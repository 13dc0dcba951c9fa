import { Command } from 'commander';
import { checkEmail, checkRole, createDashboardUser, listDashboardUsers, resetDashboardUser2fa, setDashboardUserActive, setDashboardUserRole } from '../../app/dashboard-users.ts';
import { UsageError } from '../../domain/errors.ts';
import { withCommon } from '../context.ts';
import { emit, keyValues, table } from '../output.ts';

// Dashboard users, for the operator (docs/dashboard.md#first-sign-in): there is no default account,
// and a user locked out of their second factor is let back in from here.

const OPERATOR = { userId: null, actor: 'cli', ip: null, userAgent: null };

export function usersCommand(): Command {
  const cmd = new Command('users').description('dashboard users: create (prints a one-time set-up link), list, grant, disable, reset-2fa');

  cmd
    .command('create')
    .description('create a dashboard user; prints a set-up link (single use, 24 h)')
    .requiredOption('--email <email>', 'the sign-in email', checkEmail)
    .requiredOption('--role <role>', 'owner, manager, accountant or viewer', checkRole)
    .option('--points <ids>', 'comma-separated merchant point ids the role applies to (default: every point)', (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean))
    .option('--json', 'machine-readable output')
    .action(async (opts: { email: string; role: ReturnType<typeof checkRole>; points?: string[]; json?: boolean }) => {
      await withCommon(async (common) => {
        const out = await createDashboardUser(common, { email: opts.email, role: opts.role, pointIds: opts.points ?? [] }, OPERATOR);
        emit(opts.json, out, () => `${keyValues({ id: out.user.id, email: out.user.email, role: opts.role, points: opts.points?.join(', ') ?? 'all' })}\n\nSet-up link (single use, expires ${out.expiresAt}):\n${out.setupLink}`);
      });
    });

  cmd
    .command('list')
    .description('list dashboard users')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      await withCommon(async (common) => {
        const users = await listDashboardUsers(common);
        emit(opts.json, users, () =>
          table(users.map((u) => ({ ...u, grants: u.grants.map((g) => `${g.role}@${g.pointId}`).join(' '), twoFactor: [u.totp ? 'totp' : '', u.passkeys ? `${u.passkeys} passkey(s)` : ''].filter(Boolean).join(', ') || '-' })), ['id', 'email', 'active', 'grants', 'twoFactor']),
        );
      }, { readOnly: true });
    });

  for (const [name, active] of [['disable', false], ['enable', true]] as const) {
    cmd
      .command(name)
      .description(active ? 'let a disabled user sign in again' : "refuse a user's sign-ins and end their sessions")
      .argument('<user>', 'user id or email')
      .option('--json', 'machine-readable output')
      .action(async (ref: string, opts: { json?: boolean }) => {
        await withCommon(async (common) => {
          const user = await setDashboardUserActive(common, ref, active, OPERATOR);
          emit(opts.json, user, () => `dashboard user ${user.email} is now ${active ? 'active' : 'disabled'}`);
        });
      });
  }

  cmd
    .command('grant')
    .description("replace a user's role (and points); the user's sessions end")
    .argument('<user>', 'user id or email')
    .requiredOption('--role <role>', 'owner, manager, accountant or viewer', checkRole)
    .option('--points <ids>', 'comma-separated merchant point ids (default: every point)', (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean))
    .option('--json', 'machine-readable output')
    .action(async (ref: string, opts: { role: ReturnType<typeof checkRole>; points?: string[]; json?: boolean }) => {
      await withCommon(async (common) => {
        const user = await setDashboardUserRole(common, ref, { role: opts.role, pointIds: opts.points ?? [] }, OPERATOR);
        emit(opts.json, user, () => `${user.email} is now ${user.grants.map((g) => `${g.role} of ${g.pointId === '*' ? 'every point' : g.pointId}`).join(', ')}; their sessions ended`);
      });
    });

  cmd
    .command('reset-2fa')
    .description("clear a user's password, TOTP, recovery codes and passkeys; prints a new set-up link")
    .argument('<user>', 'user id or email')
    .option('--json', 'machine-readable output')
    .action(async (ref: string, opts: { json?: boolean }) => {
      if (!ref.trim()) throw new UsageError('name the user (id or email)');
      await withCommon(async (common) => {
        const out = await resetDashboardUser2fa(common, ref, OPERATOR);
        emit(opts.json, out, () => `${out.user.email}: password and second factors cleared, sessions ended.\nSet-up link (single use, expires ${out.expiresAt}):\n${out.setupLink}`);
      });
    });
  return cmd;
}
