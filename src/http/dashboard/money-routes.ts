import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  broadcastFromDashboard,
  cancelFromDashboard,
  moneyPlanFor,
  planFileFor,
  planRefundFromDashboard,
  planSweepFromDashboard,
  refundPageFor,
  sweepsPageFor,
  type MoneyPlanDetail,
  type RefundForm,
  type SweepForm,
} from '../../app/dashboard-money.ts';
import type { DashboardPrincipal } from '../../app/dashboard-session.ts';
import { UsageError } from '../../domain/errors.ts';
import { bodyOf, client, field, isJson, redirect, sendPage, type DashboardKit } from './kit.ts';
import * as pages from './pages-money.ts';

// Refunds and sweeps (docs/dashboard.md#refunds-and-sweeps): plan on the server, download, sign
// offline, upload the signed file, broadcast; `serve` follows it. A refused step answers the page
// again with its one-line reason (a JSON request gets the coded error).

const PLAN_QUERY = { planned: 'The plan is recorded. Download it, sign it offline, upload the signed file.', sent: 'Broadcast: the transactions were sent; serve follows them to finality.', cancelled: 'The plan was cancelled.' } as const;

export function moneyRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf, acting } = kit;
  const common = deps.common;
  const idOf = (req: FastifyRequest): string => (req.params as { id: string }).id;

  const planView = (d: MoneyPlanDetail) => ({ id: d.id, kind: d.kind, chain: d.chain, network: d.network, state: d.state, to: d.to, paymentId: d.paymentId, canAct: d.canAct, fileName: d.fileName, signCommand: d.signCommand, summary: d.summary, transactions: d.txs, refund: d.refund, plan: d.plan });
  const planPage = async (reply: FastifyReply, p: DashboardPrincipal, id: string, status: number, message: { text: string; ok: boolean } | null) => {
    const d = await moneyPlanFor(common, p, id);
    return sendPage(reply, status, pages.planPage(layout(d.kind === 'refund' ? 'Refund plan' : 'Sweep plan', p, p.csrfToken), d, message));
  };
  /** A refusal of the use case shown on the page it came from; anything else (403, 404) as the kit answers it. */
  const orPage = async <T>(req: FastifyRequest, run: () => Promise<T>, onRefused: (message: string) => Promise<FastifyReply>): Promise<T | FastifyReply> => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof UsageError && !isJson(req)) return onRefused(err.message.charAt(0).toUpperCase() + err.message.slice(1));
      throw err;
    }
  };

  routes.add('GET', '/payments/:id/refund', async (req, reply) => {
    const p = await principalOf(req);
    const data = await refundPageFor(common, p, idOf(req));
    if (isJson(req)) return reply.send({ payment: { id: data.payment.id, status: data.payment.status }, received: data.offer.received.toString(), committed: data.offer.committed.toString(), overPayment: data.offer.overPayment?.toString() ?? null, refunds: data.refunds, canAct: data.canAct });
    return sendPage(reply, 200, pages.refundPage(layout('Refund', p, p.csrfToken), data, null, null));
  });

  routes.add('POST', '/api/payments/:id/refund', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const form: RefundForm = { to: field(body, 'to'), amount: field(body, 'amount'), feePayer: field(body, 'feePayer'), fromAddress: field(body, 'fromAddress') };
    const id = idOf(req);
    const result = await orPage(req, () => planRefundFromDashboard(common, p, id, form, client(req)), async (message) =>
      sendPage(reply, 400, pages.refundPage(layout('Refund', p, p.csrfToken), await refundPageFor(common, p, id), message, form)),
    );
    if (!('planId' in result)) return result;
    if (isJson(req)) return reply.code(201).send(result);
    return redirect(reply, `/dashboard/plans/${result.planId}?planned=1`);
  });

  routes.add('GET', '/plans/:id', async (req, reply) => {
    const p = await principalOf(req);
    if (isJson(req)) return reply.send(planView(await moneyPlanFor(common, p, idOf(req))));
    const q = req.query as Record<string, string | undefined>;
    const said = (Object.keys(PLAN_QUERY) as (keyof typeof PLAN_QUERY)[]).find((k) => q[k] === '1');
    return planPage(reply, p, idOf(req), 200, said ? { text: PLAN_QUERY[said], ok: true } : null);
  });

  routes.add('GET', '/api/plans/:id/file', async (req, reply) => {
    const p = await principalOf(req);
    const file = await planFileFor(common, p, idOf(req), client(req));
    return reply.header('Content-Type', 'application/json; charset=utf-8').header('Content-Disposition', `attachment; filename="${file.fileName}"`).send(file.text);
  });

  routes.add('POST', '/api/plans/:id/signed', async (req, reply) => {
    const p = await acting(req);
    const id = idOf(req);
    // A browser's form sends the file as a multipart part; a script may send the signed file itself as the JSON body.
    const text = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : field(bodyOf(req), 'signed');
    const result = await orPage(req, () => broadcastFromDashboard(common, p, id, text, client(req)), (message) => {
      const why = message.replace(/^Refused, nothing sent: /i, '');
      return planPage(reply, p, id, 400, { text: `Refused, nothing sent: ${why.charAt(0).toLowerCase()}${why.slice(1)}`, ok: false });
    });
    if (!('planId' in result)) return result;
    if (isJson(req)) return reply.send(result);
    return redirect(reply, `/dashboard/plans/${id}?sent=1`);
  });

  routes.add('POST', '/api/plans/:id/cancel', async (req, reply) => {
    const p = await acting(req);
    const id = idOf(req);
    const done = await orPage(req, async () => {
      await cancelFromDashboard(common, p, id, client(req));
      return { cancelled: true as const };
    }, (message) => planPage(reply, p, id, 400, { text: message, ok: false }));
    if (!('cancelled' in done)) return done;
    if (isJson(req)) return reply.send({ cancelled: true, planId: id });
    return redirect(reply, `/dashboard/plans/${id}?cancelled=1`);
  });

  routes.add('GET', '/sweeps', async (req, reply) => {
    const p = await principalOf(req);
    const data = await sweepsPageFor(common, p);
    if (isJson(req)) return reply.send({ canSweep: data.canSweep, plans: data.plans.map(({ canAct, ...rest }) => ({ ...rest, canAct })) });
    return sendPage(reply, 200, pages.sweepsPage(layout('Refunds and sweeps', p, p.csrfToken), data, null, null));
  });

  routes.add('POST', '/api/sweeps', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const form: SweepForm = { chain: field(body, 'chain'), testnet: field(body, 'testnet') === 'true', to: field(body, 'to'), feePayer: field(body, 'feePayer'), min: field(body, 'min') };
    const again = async (status: number, message: string, ok: boolean) => sendPage(reply, status, pages.sweepsPage(layout('Refunds and sweeps', p, p.csrfToken), await sweepsPageFor(common, p), { text: message, ok }, form));
    const result = await orPage(req, () => planSweepFromDashboard(common, p, form, client(req)), (message) => again(400, message, false));
    if (!('planId' in result)) return result;
    if (isJson(req)) return reply.code(result.planId ? 201 : 200).send(result);
    if (result.planId === null) return again(200, `Nothing to sweep: ${result.reason}.`, true);
    return redirect(reply, `/dashboard/plans/${result.planId}?planned=1`);
  });
}
