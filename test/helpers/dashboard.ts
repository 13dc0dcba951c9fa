import assert from 'node:assert/strict';
import type { Common } from '../../src/common.ts';
import { createDashboardUser } from '../../src/app/dashboard-users.ts';
import type { Role } from '../../src/domain/dashboard-roles.ts';
import { totpAt } from '../../src/domain/totp.ts';

// A dashboard client without a browser: a cookie jar over fetch that sends the dashboard's own
// Origin, and the first sign-in of a user (set-up link, password, TOTP) as a browser would do it.

export const PASSWORD = 'correct horse battery staple';

export interface DashboardClient {
  base: string;
  jar: Map<string, string>;
  /** The CSRF token of the last page read (its <meta name="csrf-token">). */
  csrf: string;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; text: string; headers: Headers }>;
  /** A form POST carrying the page's CSRF token (unless `_csrf` is given) and the dashboard's Origin. */
  post(path: string, fields: Record<string, string | string[]>, headers?: Record<string, string>): Promise<{ status: number; text: string; headers: Headers }>;
  postJson(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any; headers: Headers }>;
  cookieHeader(): string;
  sessionToken(): string | undefined;
}

export function dashboardClient(base: string): DashboardClient {
  const jar = new Map<string, string>();
  const c: DashboardClient = {
    base,
    jar,
    csrf: '',
    cookieHeader: () => [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
    sessionToken: () => jar.get('__Host-cg_session'),
    async get(path, headers = {}) {
      const res = await fetch(base + path, { redirect: 'manual', headers: { Cookie: c.cookieHeader(), ...headers } });
      keep(res);
      const text = await res.text();
      const m = /<meta name="csrf-token" content="([^"]*)">/.exec(text);
      if (m?.[1]) c.csrf = m[1];
      return { status: res.status, text, headers: res.headers };
    },
    async post(path, fields, headers = {}) {
      const form = new URLSearchParams();
      if (!('_csrf' in fields)) form.append('_csrf', c.csrf);
      for (const [k, v] of Object.entries(fields)) for (const x of [v].flat()) form.append(k, x);
      const res = await fetch(base + path, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: base, Cookie: c.cookieHeader(), ...headers }, body: form.toString() });
      keep(res);
      const text = await res.text();
      const m = /<meta name="csrf-token" content="([^"]*)">/.exec(text);
      if (m?.[1]) c.csrf = m[1];
      return { status: res.status, text, headers: res.headers };
    },
    async postJson(path, body, headers = {}) {
      const res = await fetch(base + path, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: base, 'X-CSRF-Token': c.csrf, Cookie: c.cookieHeader(), ...headers }, body: JSON.stringify(body) });
      keep(res);
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
    },
  };
  function keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === '' || /Max-Age=0/.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
  }
  return c;
}

/** The token of a set-up link. */
export function setupTokenOf(link: string): string {
  return new URL(link).searchParams.get('token') ?? '';
}

/**
 * A user made as the operator makes one, then set up in the dashboard (password, TOTP): a client
 * holding a full session, and the TOTP secret for later sign-ins.
 */
export async function signedInUser(common: Common, base: string, input: { email: string; role: Role; pointIds?: string[] }): Promise<{ client: DashboardClient; totpSecret: string; recoveryCodes: string[]; userId: string }> {
  const { user, setupLink } = await createDashboardUser(common, { email: input.email, role: input.role, pointIds: input.pointIds ?? [] }, { userId: null, actor: 'test', ip: null, userAgent: null });
  const client = dashboardClient(base);
  const token = setupTokenOf(setupLink);
  assert.equal((await client.get(`/dashboard/setup?token=${token}`)).status, 200);
  const setup = await client.post('/dashboard/api/setup', { token, password: PASSWORD, confirm: PASSWORD });
  assert.equal(setup.status, 303, setup.text);
  assert.equal(setup.headers.get('location'), '/dashboard/enrol');
  const enrol = await client.get('/dashboard/enrol');
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.text)?.[1];
  const sealed = /name="sealed" value="([^"]+)"/.exec(enrol.text)?.[1];
  assert.ok(secret && sealed, 'the enrolment page shows the secret');
  const done = await client.post('/dashboard/api/totp', { sealed, code: totpAt(secret, Date.now()) });
  assert.equal(done.status, 200, done.text);
  const codes = [...done.text.matchAll(/<li>([a-z0-9]{5}-[a-z0-9]{5})<\/li>/g)].map((m) => m[1]!);
  assert.equal(codes.length, 10);
  return { client, totpSecret: secret, recoveryCodes: codes, userId: user.id };
}
