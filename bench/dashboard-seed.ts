// The dashboard bench's world, written by the database itself: each table is filled by
// INSERT … SELECT over a counter (a recursive CTE, the same text on SQLite and PostgreSQL but for the
// time and boolean literals), through the store's one write path. A million rows built and bound in
// JavaScript took minutes on the shared 2-core box; generated inside the database they take seconds.
// Every value is a function of the invoice's number n, so the bench knows its search targets.
import type { Common } from '../src/common.ts';
import type { Executor } from '../src/store/executor.ts';

export interface SeedShape {
  invoices: number;
  points: string[];
  /** Invoice n is created at start + n * stepMs (epoch ms). */
  startMs: number;
  stepMs: number;
}

const CHUNK = 100_000;

/** Invoice n's classes: h picks the status, u the unusual kind (both 0..999). */
export const classes = {
  h: (n: number) => Number((BigInt(n) * 2654435761n) % 1000n),
  u: (n: number) => Number((BigInt(n) * 40503n) % 1000n),
};

export function statusOf(n: number): 'PAID' | 'EXPIRED' | 'OPEN' | 'CANCELLED' | 'PAYMENT_PENDING' {
  const h = classes.h(n);
  return h < 600 ? 'PAID' : h < 800 ? 'EXPIRED' : h < 880 ? 'OPEN' : h < 950 ? 'CANCELLED' : 'PAYMENT_PENDING';
}

/** The search targets of invoice n. */
export function targetsOf(n: number) {
  const s = statusOf(n);
  const paid = s === 'PAID';
  return { invoiceId: `i${n}`, orderId: `ord-${n}`, address: s === 'OPEN' || s === 'CANCELLED' ? null : `addr${n}a`, txHash: paid ? `0xtx${n}a` : null };
}

export async function seedWorld(common: Common, shape: SeedShape, progress: (done: number) => void): Promise<void> {
  const pg = common.db.dialect === 'postgresql';
  // Times: SQLite keeps epoch ms, PostgreSQL timestamptz.
  const ts = (ms: string) => (pg ? `to_timestamp((${ms}) / 1000.0)` : `(${ms})`);
  const no = pg ? 'false' : '0';
  const json = pg ? `cast('{}' as json)` : `'{}'`;
  const h = '((n * 2654435761) % 1000)';
  const u = '((n * 40503) % 1000)';
  const status = `(case when ${h} < 600 then 'PAID' when ${h} < 800 then 'EXPIRED' when ${h} < 880 then 'OPEN' when ${h} < 950 then 'CANCELLED' else 'PAYMENT_PENDING' end)`;
  const point = `(case n % ${shape.points.length} ${shape.points.map((id, i) => `when ${i} then '${id}'`).join(' ')} end)`;
  const chain = `(case n % 6 when 0 then 'ethereum' when 1 then 'polygon' when 2 then 'tron' when 3 then 'bitcoin' when 4 then 'solana' else 'bsc' end)`;
  const coin = `(case when n % 6 = 3 then 'BTC' when n % 6 = 4 then 'SOL' when n % 3 = 0 then 'USDT' when n % 6 = 2 then 'TRX' else 'ETH' end)`;
  const created = `(${shape.startMs} + n * ${shape.stepMs})`;
  const future = `${shape.startMs + 400 * 86_400_000}`;
  const series = (from: number, to: number) => `with recursive s(n) as (select cast(${from} as bigint) union all select n + 1 from s where n + 1 < ${to})`;

  for (let from = 0; from < shape.invoices; from += CHUNK) {
    const to = Math.min(shape.invoices, from + CHUNK);
    await common.db.write(async (x: Executor) => {
      await x.run(`${series(from, to)}
        insert into invoice (id, reference_id, merchant_id, order_id, description, amount, currency, status, customer_email, customer_name, customer_metadata, metadata, return_url, cancel_url, expires_at, viewed_at, paid_at, cancelled_at, created_at, updated_at)
        select 'i' || n, 'INV' || n, ${point}, 'ord-' || n, '', '2500', 'USD', ${status}, 'buyer' || (n % 200000) || '@example.com', null, ${json}, ${json}, null, null,
          ${ts(`case when ${status} in ('OPEN', 'PAYMENT_PENDING') then ${future} else ${created} + 86400000 end`)}, null,
          ${ts(`case when ${status} = 'PAID' then ${created} + 120000 else null end`)}, ${ts(`case when ${status} = 'CANCELLED' then ${created} + 60000 else null end`)},
          ${ts(created)}, ${ts(`${created} + 120000`)}
        from s`);
      // Each invoice with a payment has its main one (a): COMPLETED (some underpaid, overpaid or
      // refunded) for PAID, EXPIRED (some FAILED) for EXPIRED, PENDING for PAYMENT_PENDING.
      const pstatus = `(case ${status} when 'PAID' then (case when ${u} between 20 and 24 then 'REFUNDED' else 'COMPLETED' end) when 'EXPIRED' then (case when ${u} < 10 then 'FAILED' else 'EXPIRED' end) else 'PENDING' end)`;
      const received = `(case when ${status} = 'PAID' then (case when ${u} < 10 then '24.5' when ${u} < 20 then '26' else '25' end) when ${u} < 10 then '25' else '0' end)`;
      const paymentCols = 'id, reference_id, invoice_id, merchant_id, status, payment_type, method, blockchain, network, is_testnet, crypto_currency, decimals, token_address, amount, expected_amount, received_amount, address, confirmations, required_confirmations, transaction_hash, block_number, contract_address, external_id, external_id_uuid, metadata, expires_at, completed_at, created_at, updated_at';
      await x.run(`${series(from, to)}
        insert into payment (${paymentCols})
        select 'p' || n || 'a', 'PAY' || n || 'A', 'i' || n, ${point}, ${pstatus}, 'DIRECT', 'direct', ${chain}, 'MAINNET', ${no}, ${coin}, 6, null, '25', '25', ${received},
          'addr' || n || 'a', 0, 12, (case when ${status} = 'PAID' then '0xtx' || n || 'a' when ${u} < 10 then '0xfail' || n else null end), null, null, null, null, ${json},
          ${ts(`case when ${status} = 'PAYMENT_PENDING' then ${future} else ${created} + 3600000 end`)}, ${ts(`case when ${status} = 'PAID' then ${created} + 120000 else null end`)},
          ${ts(`${created} + 60000`)}, ${ts(`${created} + 120000`)}
        from s where ${status} in ('PAID', 'EXPIRED', 'PAYMENT_PENDING')`);
      // An earlier expired attempt (b): 40 % of PAID invoices, half of EXPIRED ones.
      await x.run(`${series(from, to)}
        insert into payment (${paymentCols})
        select 'p' || n || 'b', 'PAY' || n || 'B', 'i' || n, ${point}, 'EXPIRED', 'DIRECT', 'direct', ${chain}, 'MAINNET', ${no}, ${coin}, 6, null, '25', '25', '0',
          'addr' || n || 'b', 0, 12, null, null, null, null, null, ${json}, ${ts(`${created} + 3000`)}, null, ${ts(`${created} + 1000`)}, ${ts(`${created} + 3000`)}
        from s where (${status} = 'PAID' and (n * 7) % 10 < 4) or (${status} = 'EXPIRED' and n % 2 = 0)`);
      // Late funds: 1 % of EXPIRED invoices got a transfer after the window.
      await x.run(`${series(from, to)}
        insert into observed_transfer (id, chain, network, tx_hash, log_index, block_number, block_hash, from_address, to_address, token_address, symbol, amount, payment_id, status, note, created_at, updated_at)
        select 't' || n, ${chain}, 'MAINNET', '0xlate' || n, -1, '100', '0xblock', null, 'addr' || n || 'a', null, ${coin}, '25000000', 'p' || n || 'a', 'LATE', null, ${ts(`${created} + 7200000`)}, ${ts(`${created} + 7200000`)}
        from s where ${status} = 'EXPIRED' and ${u} between 10 and 19`);
      await x.run(`${series(from, to)}
        insert into refund (id, payment_id, plan_id, chain, network, is_testnet, symbol, token_address, decimals, amount, to_address, from_address, from_kind, fee_from_payment, created_at)
        select 'r' || n, 'p' || n || 'a', 'plan' || n, ${chain}, 'MAINNET', ${no}, ${coin}, null, 6, '25000000', 'buyer' || n, 'addr' || n || 'a', 'deposit', '0', ${ts(`${created} + 86400000`)}
        from s where ${status} = 'PAID' and ${u} between 20 and 24`);
    });
    progress(to);
  }
}
