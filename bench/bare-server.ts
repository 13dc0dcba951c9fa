// The bare limit for `npm run bench`: the least a server can do for chaingate's hot routes on the
// same schema (the tables `chaingate migrate` made), written by hand. Fastify, HMAC over the raw
// body, the merchant looked up by key on every request (its secret decrypted), and for writes the
// idempotency claim, the work and the stored answer in one transaction. No ORM, no validation
// library, no expiry rules beyond the conditional updates, no logging.
//   node --import tsx bench/bare-server.ts <database url> <master key hex>
// Prints {"listening":"http://127.0.0.1:<port>"} once ready.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { createSecretBox } from '../src/domain/secret-box.ts';
import { newId } from '../src/domain/ids.ts';
import { formatReferenceId, referenceDay } from '../src/domain/reference-id.ts';
import { priceInvoice } from '../src/domain/pricing.ts';
import { paymentUri } from '../src/http/checkout/payment-uri.ts';
import { createPeggedRateSource, createStaticRateSource, DEFAULT_PEGS } from '../src/domain/rate-source.ts';

const [url, masterKey] = process.argv.slice(2) as [string, string];
const box = createSecretBox(masterKey);
// USDC at its USD peg, as chaingate's default pricing does.
const rates = createPeggedRateSource(createStaticRateSource({}), { pegs: { ...DEFAULT_PEGS } });
const TTL_MS = 24 * 3_600_000;
const USDC = { symbol: 'USDC', decimals: 6, address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' };

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

interface MerchantRow {
  id: string;
  api_secret_enc: string;
  active: number | boolean;
}

/** The data access the routes need, once per dialect. Each write runs in one transaction. */
interface Store {
  merchantByKey(apiKey: string): Promise<MerchantRow | undefined>;
  createInvoice(m: string, key: string, fp: string, body: CreateBody, now: Date, requestId: string): Promise<{ status: number; body: string }>;
  invoiceForCheckout(id: string, m: string): Promise<{ amount: string; currency: string } | undefined>;
  checkout(m: string, key: string, fp: string, invoiceId: string, amount: string, pricing: unknown, now: Date, requestId: string): Promise<{ status: number; body: string }>;
  publicInvoice(id: string, now: Date): Promise<Record<string, unknown> | undefined>;
  paymentStatus(id: string, now: Date): Promise<Record<string, unknown> | undefined>;
}

interface CreateBody {
  orderId: string;
  amount: string;
  currency: string;
  description?: string;
  metadata?: Record<string, unknown>;
  expiresInMinutes?: number;
}

/** chaingate's status-poll statement (src/store/payments.ts), with `?` for SQLite and $n for PostgreSQL. */
const PAYMENT_STATUS_SQL = `select p.id, p.reference_id, p.status, p.payment_type, p.method, p.blockchain, p.network, p.is_testnet, p.crypto_currency,
    p.decimals, p.token_address, p.amount, p.address, p.confirmations, p.required_confirmations, p.transaction_hash, p.contract_address,
    p.external_id, p.external_id_uuid, p.expires_at, p.created_at, p.completed_at,
    case when p.status = 'PENDING' and p.expires_at <= ? then 1 else 0 end as due
  from payment p where p.id = ?`;
/**
 * chaingate's public invoice read (src/store/invoices.ts PUBLIC_SNAPSHOT_SQL): the merchant's choices
 * for the offer and the `due` flag of the expiry rules (an invoice past its window reads EXPIRED).
 */
const PUBLIC_INVOICE_SQL = `select i.id, i.reference_id, i.merchant_id, i.amount, i.currency, i.description, i.status, i.customer_email, i.customer_name,
    i.return_url, i.cancel_url, i.expires_at, i.viewed_at, i.paid_at, m.name as merchant_name, m.accepted_chains, m.accepted_currencies,
    0 as live,
    case when (i.status = 'OPEN' and i.expires_at <= ?)
      or (i.status = 'PAYMENT_PENDING' and exists (select 1 from payment p where p.invoice_id = i.id and p.status = 'PENDING' and p.expires_at <= ?))
      then 1 else 0 end as due
  from invoice i join merchant_point m on m.id = i.merchant_id where i.id = ?`;
const pgText = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};
const PAYMENT_STATUS_PG = pgText(PAYMENT_STATUS_SQL);
const PUBLIC_INVOICE_PG = pgText(PUBLIC_INVOICE_SQL);

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as number | string | Date).toISOString());
const envelope = (data: unknown, requestId: string) => JSON.stringify({ success: true, data, timestamp: new Date().toISOString(), requestId });

function invoiceData(id: string, ref: string, b: CreateBody, expiresAt: Date, now: Date) {
  return {
    id, referenceId: ref, orderId: b.orderId, description: b.description ?? '', amount: b.amount, currency: b.currency.toUpperCase(), status: 'OPEN',
    customerEmail: null, customerName: null, customerMetadata: {}, metadata: b.metadata ?? {}, returnUrl: null, cancelUrl: null,
    expiresAt: expiresAt.toISOString(), viewedAt: null, paidAt: null, cancelledAt: null, createdAt: now.toISOString(),
  };
}

function checkoutData(invoiceId: string, inv: { reference_id: string; amount: string; currency: string; expires_at: unknown }, p: { id: string; ref: string; address: string; amount: string; expiresAt: Date; now: Date }) {
  return {
    invoice: { id: invoiceId, referenceId: inv.reference_id, status: 'PAYMENT_PENDING', amount: inv.amount, currency: inv.currency, expiresAt: iso(inv.expires_at) },
    payment: {
      id: p.id, referenceId: p.ref, paymentAddress: p.address, amount: p.amount, blockchain: 'ethereum', cryptoCurrency: 'USDC', status: 'PENDING',
      expiresAt: p.expiresAt.toISOString(), createdAt: p.now.toISOString(), network: 'mainnet', isTestnet: false, decimals: USDC.decimals, requiredConfirmations: 12,
    },
  };
}

function sqliteStore(path: string): Store {
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = wal');
  db.pragma('busy_timeout = 10000');
  db.pragma('synchronous = full'); // durable commits, as chaingate's (src/store/orm.ts)
  // chaingate's page cache (src/store/orm.ts PAGE_CACHE_KIB; better-sqlite3's own default is 16 MB),
  // so the two servers differ in code, not in database settings.
  db.pragma('cache_size = -2000');
  const s = {
    merchant: db.prepare('select id, api_secret_enc, active from merchant_point where api_key = ?'),
    claim: db.prepare(`insert into idempotency_record (id, merchant_id, key, fingerprint, state, status_code, response_body, created_at, expires_at) values (?, ?, ?, ?, 'IN_FLIGHT', null, null, ?, ?)`),
    existing: db.prepare('select fingerprint, state, status_code, response_body from idempotency_record where merchant_id = ? and key = ?'),
    complete: db.prepare(`update idempotency_record set state = 'COMPLETED', status_code = ?, response_body = ? where id = ?`),
    counter: db.prepare('insert into reference_counter (id, value) values (?, 1) on conflict (id) do update set value = reference_counter.value + 1 returning value'),
    invoice: db.prepare(`insert into invoice (id, reference_id, merchant_id, order_id, description, amount, currency, status, customer_email, customer_name, customer_metadata, metadata, return_url, cancel_url, expires_at, viewed_at, paid_at, cancelled_at, created_at, updated_at)
      values (?, ?, ?, ?, ?, ?, ?, 'OPEN', null, null, '{}', ?, null, null, ?, null, null, null, ?, ?)`),
    invoiceForCheckout: db.prepare('select amount, currency from invoice where id = ? and merchant_id = ?'),
    claimInvoice: db.prepare(`update invoice set status = 'PAYMENT_PENDING', updated_at = ? where id = ? and merchant_id = ? and status = 'OPEN' and expires_at > ? returning reference_id, amount, currency, expires_at`),
    lease: db.prepare(`update wallet_address set status = 'LEASED', payment_id = ?, leased_at = ? where id = (select id from wallet_address where chain = 'ethereum' and is_testnet = 0 and status = 'FREE' order by derivation_index, created_at, id limit 1) returning address`),
    payment: db.prepare(`insert into payment (id, reference_id, invoice_id, merchant_id, status, payment_type, method, blockchain, network, is_testnet, crypto_currency, decimals, token_address, amount, expected_amount, received_amount, address, confirmations, required_confirmations, metadata, expires_at, created_at, updated_at)
      values (?, ?, ?, ?, 'PENDING', 'DIRECT', 'direct', 'ethereum', 'mainnet', 0, 'USDC', 6, ?, ?, ?, '0', ?, 0, 12, ?, ?, ?, ?)`),
    publicInvoice: db.prepare(PUBLIC_INVOICE_SQL),
    viewed: db.prepare('update invoice set viewed_at = ? where id = ? and viewed_at is null'),
    paymentStatus: db.prepare(PAYMENT_STATUS_SQL),
  };
  /** The claim, the work and the answer in one immediate transaction, or the stored answer. */
  function idempotent(m: string, key: string, fp: string, now: Date, work: () => { status: number; body: string }) {
    const run = db.transaction(() => {
      const id = newId();
      s.claim.run(id, m, key, fp, now.getTime(), now.getTime() + TTL_MS);
      const answer = work();
      s.complete.run(answer.status, answer.body, id);
      return answer;
    });
    try {
      return run.immediate();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
      const row = s.existing.get(m, key) as { fingerprint: string; state: string; status_code: number; response_body: string } | undefined;
      if (!row || row.fingerprint !== fp || row.state !== 'COMPLETED') throw new HttpError(409, 'IDEMPOTENCY_KEY_CONFLICT');
      return { status: row.status_code, body: row.response_body };
    }
  }
  return {
    merchantByKey: async (apiKey) => s.merchant.get(apiKey) as MerchantRow | undefined,
    createInvoice: async (m, key, fp, b, now, requestId) =>
      idempotent(m, key, fp, now, () => {
        const day = referenceDay(now);
        const { value } = s.counter.get(`INV-${day}`) as { value: number };
        const ref = formatReferenceId('INV', day, value);
        const id = newId();
        const expiresAt = new Date(now.getTime() + (b.expiresInMinutes ?? 60) * 60_000);
        s.invoice.run(id, ref, m, b.orderId, b.description ?? '', b.amount, b.currency.toUpperCase(), JSON.stringify(b.metadata ?? {}), expiresAt.getTime(), now.getTime(), now.getTime());
        return { status: 201, body: envelope(invoiceData(id, ref, b, expiresAt, now), requestId) };
      }),
    invoiceForCheckout: async (id, m) => s.invoiceForCheckout.get(id, m) as { amount: string; currency: string } | undefined,
    checkout: async (m, key, fp, invoiceId, amount, pricing, now, requestId) =>
      idempotent(m, key, fp, now, () => {
        const inv = s.claimInvoice.get(now.getTime(), invoiceId, m, now.getTime()) as { reference_id: string; amount: string; currency: string; expires_at: number } | undefined;
        if (!inv) throw new HttpError(400, 'INVOICE_NOT_AVAILABLE');
        const id = newId();
        const leased = s.lease.get(id, now.getTime()) as { address: string } | undefined;
        if (!leased) throw new HttpError(503, 'NO_AVAILABLE_WALLET');
        const day = referenceDay(now);
        const { value } = s.counter.get(`PAY-${day}`) as { value: number };
        const ref = formatReferenceId('PAY', day, value);
        const expiresAt = new Date(Math.min(now.getTime() + 30 * 60_000, inv.expires_at));
        s.payment.run(id, ref, invoiceId, m, USDC.address, amount, amount, leased.address, JSON.stringify({ pricing }), expiresAt.getTime(), now.getTime(), now.getTime());
        return { status: 201, body: envelope(checkoutData(invoiceId, inv, { id, ref, address: leased.address, amount, expiresAt, now }), requestId) };
      }),
    publicInvoice: async (id, now) => {
      const row = s.publicInvoice.get(now.getTime(), now.getTime(), id) as Record<string, unknown> | undefined;
      if (row && row.viewed_at === null) s.viewed.run(now.getTime(), id);
      return row;
    },
    paymentStatus: async (id, now) => s.paymentStatus.get(now.getTime(), id) as Record<string, unknown> | undefined,
  };
}

function pgStore(connectionString: string): Store {
  const pool = new pg.Pool({ connectionString, max: 10 });
  async function idempotent(m: string, key: string, fp: string, now: Date, work: (c: pg.PoolClient) => Promise<{ status: number; body: string }>) {
    const c = await pool.connect();
    try {
      await c.query('begin');
      try {
        const id = newId();
        await c.query(`insert into idempotency_record (id, merchant_id, key, fingerprint, state, status_code, response_body, created_at, expires_at) values ($1, $2, $3, $4, 'IN_FLIGHT', null, null, $5, $6)`, [id, m, key, fp, now, new Date(now.getTime() + TTL_MS)]);
        const answer = await work(c);
        await c.query(`update idempotency_record set state = 'COMPLETED', status_code = $1, response_body = $2 where id = $3`, [answer.status, answer.body, id]);
        await c.query('commit');
        return answer;
      } catch (err) {
        await c.query('rollback');
        if ((err as { code?: string }).code !== '23505') throw err;
      }
      const { rows } = await c.query('select fingerprint, state, status_code, response_body from idempotency_record where merchant_id = $1 and key = $2', [m, key]);
      const row = rows[0] as { fingerprint: string; state: string; status_code: number; response_body: string } | undefined;
      if (!row || row.fingerprint !== fp || row.state !== 'COMPLETED') throw new HttpError(409, 'IDEMPOTENCY_KEY_CONFLICT');
      return { status: row.status_code, body: row.response_body };
    } finally {
      c.release();
    }
  }
  const nextRef = async (c: pg.PoolClient, kind: 'INV' | 'PAY', now: Date) => {
    const day = referenceDay(now);
    const { rows } = await c.query('insert into reference_counter (id, value) values ($1, 1) on conflict (id) do update set value = reference_counter.value + 1 returning value', [`${kind}-${day}`]);
    return formatReferenceId(kind, day, Number(rows[0].value));
  };
  return {
    merchantByKey: async (apiKey) => (await pool.query('select id, api_secret_enc, active from merchant_point where api_key = $1', [apiKey])).rows[0] as MerchantRow | undefined,
    createInvoice: (m, key, fp, b, now, requestId) =>
      idempotent(m, key, fp, now, async (c) => {
        const ref = await nextRef(c, 'INV', now);
        const id = newId();
        const expiresAt = new Date(now.getTime() + (b.expiresInMinutes ?? 60) * 60_000);
        await c.query(
          `insert into invoice (id, reference_id, merchant_id, order_id, description, amount, currency, status, customer_email, customer_name, customer_metadata, metadata, return_url, cancel_url, expires_at, viewed_at, paid_at, cancelled_at, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7, 'OPEN', null, null, '{}', $8, null, null, $9, null, null, null, $10, $10)`,
          [id, ref, m, b.orderId, b.description ?? '', b.amount, b.currency.toUpperCase(), JSON.stringify(b.metadata ?? {}), expiresAt, now],
        );
        return { status: 201, body: envelope(invoiceData(id, ref, b, expiresAt, now), requestId) };
      }),
    invoiceForCheckout: async (id, m) => (await pool.query('select amount, currency from invoice where id = $1 and merchant_id = $2', [id, m])).rows[0] as { amount: string; currency: string } | undefined,
    checkout: (m, key, fp, invoiceId, amount, pricing, now, requestId) =>
      idempotent(m, key, fp, now, async (c) => {
        const inv = (await c.query(`update invoice set status = 'PAYMENT_PENDING', updated_at = $1 where id = $2 and merchant_id = $3 and status = 'OPEN' and expires_at > $1 returning reference_id, amount, currency, expires_at`, [now, invoiceId, m])).rows[0];
        if (!inv) throw new HttpError(400, 'INVOICE_NOT_AVAILABLE');
        const id = newId();
        const leased = (
          await c.query(
            `update wallet_address set status = 'LEASED', payment_id = $1, leased_at = $2 where id = (select id from wallet_address where chain = 'ethereum' and is_testnet = false and status = 'FREE' order by derivation_index, created_at, id limit 1 for update skip locked) returning address`,
            [id, now],
          )
        ).rows[0] as { address: string } | undefined;
        if (!leased) throw new HttpError(503, 'NO_AVAILABLE_WALLET');
        const ref = await nextRef(c, 'PAY', now);
        const expiresAt = new Date(Math.min(now.getTime() + 30 * 60_000, new Date(inv.expires_at).getTime()));
        await c.query(
          `insert into payment (id, reference_id, invoice_id, merchant_id, status, payment_type, method, blockchain, network, is_testnet, crypto_currency, decimals, token_address, amount, expected_amount, received_amount, address, confirmations, required_confirmations, metadata, expires_at, created_at, updated_at)
           values ($1, $2, $3, $4, 'PENDING', 'DIRECT', 'direct', 'ethereum', 'mainnet', false, 'USDC', 6, $5, $6, $6, '0', $7, 0, 12, $8, $9, $10, $10)`,
          [id, ref, invoiceId, m, USDC.address, amount, leased.address, JSON.stringify({ pricing }), expiresAt, now],
        );
        return { status: 201, body: envelope(checkoutData(invoiceId, inv, { id, ref, address: leased.address, amount, expiresAt, now }), requestId) };
      }),
    publicInvoice: async (id, now) => {
      // Named statements for the reads, as chaingate's: parsed and planned once per connection.
      const row = (await pool.query({ name: 'bare_public_invoice', text: PUBLIC_INVOICE_PG, values: [now, now, id] })).rows[0] as Record<string, unknown> | undefined;
      if (row && row.viewed_at === null) await pool.query('update invoice set viewed_at = $1 where id = $2 and viewed_at is null', [now, id]);
      return row;
    },
    paymentStatus: async (id, now) => (await pool.query({ name: 'bare_payment_status', text: PAYMENT_STATUS_PG, values: [now, id] })).rows[0] as Record<string, unknown> | undefined,
  };
}

const store = url.startsWith('sqlite:') ? sqliteStore(url.slice('sqlite:'.length)) : pgStore(url);
const app = Fastify({ logger: false });
app.removeAllContentTypeParsers();
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
app.setErrorHandler((err: Error, req, reply) => {
  const status = err instanceof HttpError ? err.status : 500;
  if (status === 500) console.error(err);
  void reply.code(status).send({ success: false, error: { code: err instanceof HttpError ? err.code : 'INTERNAL_ERROR', message: err.message }, requestId: req.id });
});

/** HMAC check with the merchant looked up (and its secret opened) on every request. */
async function verify(req: FastifyRequest): Promise<{ merchantId: string; key: string; fingerprint: string }> {
  const apiKey = req.headers['x-api-key'];
  const sig = /^t=(\d+),v1=([a-f0-9]{64})$/.exec(String(req.headers['x-signature'] ?? ''));
  const key = String(req.headers['idempotency-key'] ?? '');
  if (typeof apiKey !== 'string' || !sig || !key) throw new HttpError(401, 'SIGNATURE_INVALID');
  if (Math.abs(Date.now() / 1000 - Number(sig[1])) > 300) throw new HttpError(401, 'SIGNATURE_EXPIRED');
  const m = await store.merchantByKey(apiKey);
  if (!m?.active) throw new HttpError(401, 'API_KEY_INVALID');
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  const bodyHash = createHash('sha256').update(raw).digest('hex');
  const path = req.url.split('?')[0]!;
  const want = createHmac('sha256', box.open(m.api_secret_enc, m.id)).update(`${sig[1]}\n${req.method}\n${path}\n${key}\n${bodyHash}`).digest();
  if (!timingSafeEqual(want, Buffer.from(sig[2]!, 'hex'))) throw new HttpError(401, 'SIGNATURE_INVALID');
  return { merchantId: m.id, key, fingerprint: createHash('sha256').update(`${req.method}\n${path}\n${bodyHash}`).digest('hex') };
}

const send = (reply: FastifyReply, a: { status: number; body: string }) =>
  reply.code(a.status).header('content-type', 'application/json; charset=utf-8').header('X-Request-Id', reply.request.id).send(a.body);
/** The headers chaingate's buyer reads carry (docs/checkout.md): never cached, readable from any origin. */
const buyerRead = (reply: FastifyReply) =>
  reply
    .header('Cache-Control', 'no-store')
    .header('Vary', 'Origin')
    .header('Access-Control-Allow-Origin', '*')
    .header('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset');

app.post('/api/v1/invoices', async (req, reply) => {
  const auth = await verify(req);
  const body = JSON.parse((req.body as Buffer).toString('utf8')) as CreateBody;
  if (typeof body.orderId !== 'string' || !/^[1-9]\d{0,14}$/.test(body.amount) || typeof body.currency !== 'string') throw new HttpError(400, 'VALIDATION_ERROR');
  return send(reply, await store.createInvoice(auth.merchantId, auth.key, auth.fingerprint, body, new Date(), req.id));
});

app.post('/api/v1/invoices/:id/checkout', async (req, reply) => {
  const auth = await verify(req);
  const body = JSON.parse((req.body as Buffer).toString('utf8')) as { blockchain: string; cryptoCurrency: string };
  if (body.blockchain !== 'ethereum' || body.cryptoCurrency !== 'USDC') throw new HttpError(400, 'INVALID_CURRENCY');
  const invoiceId = (req.params as { id: string }).id;
  const now = new Date();
  // Priced before the write transaction, as chaingate does.
  const inv = await store.invoiceForCheckout(invoiceId, auth.merchantId);
  if (!inv) throw new HttpError(404, 'INVOICE_NOT_FOUND');
  const priced = await priceInvoice({ mode: 'convert', invoiceAmountMinor: inv.amount, fiatCurrency: inv.currency, coin: USDC, rates, now });
  return send(reply, await store.checkout(auth.merchantId, auth.key, auth.fingerprint, invoiceId, priced.amount, priced.pricing, now, req.id));
});

app.get('/checkout/api/v1/invoices/:id', async (req, reply) => {
  const row = await store.publicInvoice((req.params as { id: string }).id, new Date());
  if (!row) throw new HttpError(404, 'INVOICE_NOT_FOUND');
  // chaingate applies the expiry rules to a due invoice and reads it again; the bench reads only live ones.
  if (Number(row.due) === 1 || row.status === 'EXPIRED') throw new HttpError(400, 'INVOICE_EXPIRED');
  if (row.status === 'CANCELLED') throw new HttpError(400, 'INVOICE_CANCELLED');
  const data = {
    id: row.id, referenceId: row.reference_id, amount: row.amount, currency: row.currency, description: row.description, merchant: { name: row.merchant_name },
    availableBlockchains: ['ethereum'], availableCurrencies: { ethereum: ['ETH', 'USDC', 'USDT'] }, customerEmail: row.customer_email, customerName: row.customer_name,
    status: row.status, expiresAt: iso(row.expires_at), returnUrl: row.return_url, cancelUrl: row.cancel_url,
  };
  return send(buyerRead(reply), { status: 200, body: envelope(data, req.id) });
});

app.get('/checkout/api/v1/payments/:id/status', async (req, reply) => {
  const now = new Date();
  const row = await store.paymentStatus((req.params as { id: string }).id, now);
  if (!row) throw new HttpError(404, 'PAYMENT_NOT_FOUND');
  // The fields chaingate answers (the spec's and the page's); ethereum only, no contract payments.
  const visible = now < new Date(iso(row.expires_at)!);
  const address = row.address as string;
  const data = {
    id: row.id, status: row.status, confirmations: row.confirmations, requiredConfirmations: row.required_confirmations, transactionHash: row.transaction_hash,
    blockchain: row.blockchain, amount: row.amount, cryptoCurrency: row.crypto_currency, paymentAddress: visible ? address : null, expiresAt: iso(row.expires_at),
    method: row.method, network: row.network, networkLabel: 'Ethereum', decimals: row.decimals, tokenAddress: row.token_address, chainId: 1,
    paymentUri: visible ? paymentUri({ family: 'evm', chainId: 1, address, amount: row.amount as string, decimals: Number(row.decimals), tokenAddress: row.token_address as string | null }) : null,
    createdAt: iso(row.created_at), completedAt: iso(row.completed_at),
  };
  return send(buyerRead(reply), { status: 200, body: envelope(data, req.id) });
});

await app.listen({ host: '127.0.0.1', port: 0 });
const addr = app.server.address();
console.log(JSON.stringify({ listening: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` }));
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
