import { BaseError } from './errors.ts';

// Dashboard roles, granted per merchant point (docs/dashboard.md#roles). Point `*` is every point.

export const ROLES = ['owner', 'manager', 'accountant', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const ALL_POINTS = '*';

/** What a role may do on a point it was granted. */
export type Permission = 'read' | 'export' | 'settings' | 'money' | 'secrets' | 'users';

const ALLOWED: Record<Role, readonly Permission[]> = {
  owner: ['read', 'export', 'settings', 'money', 'secrets', 'users'],
  manager: ['read', 'export', 'settings', 'money'],
  accountant: ['read', 'export'],
  viewer: ['read'],
};

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export function can(role: Role, permission: Permission): boolean {
  return ALLOWED[role].includes(permission);
}

export interface Grant {
  pointId: string;
  role: Role;
}

/** The role a user holds on a point: its grant on that point, else its grant on every point. */
export function roleOn(grants: readonly Grant[], pointId: string): Role | null {
  return grants.find((g) => g.pointId === pointId)?.role ?? grants.find((g) => g.pointId === ALL_POINTS)?.role ?? null;
}

/** An owner of every point: may create points and manage users. */
export function isAdmin(grants: readonly Grant[]): boolean {
  return grants.some((g) => g.pointId === ALL_POINTS && g.role === 'owner');
}

/**
 * A dashboard request refused for a reason the gateway's codes do not name (the dashboard is not
 * part of the gateway API, so its codes stay out of that list): a role that may not do this.
 */
export class DashboardError extends BaseError {
  override readonly name = 'DashboardError';
  constructor(
    readonly code: 'FORBIDDEN' | 'CSRF_FAILED' | 'SIGN_IN_REQUIRED' | 'SECOND_FACTOR_REQUIRED',
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
