import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { computeAddress, SigningKey } from 'ethers';
import { hex41ToTron, tronToHex } from '../../src/families/tron/address.ts';
import { TRANSFER_TOPIC } from '../../src/families/jsonrpc/schemas.ts';
import { decodeRaw, decodeSigned, type TronContract, type TronRaw } from '../../src/families/tron/sweep-proto.ts';
import { listenLocal } from './local-server.ts';
import { MAINNET_GENESIS } from './tron-fixtures.ts';

// A java-tron full node's HTTP API as a Tron sweep uses it (java-tron 4.7/4.8,
// framework/src/main/java/org/tron/core/services/http/: GetAccountServlet, GetAccountResourceServlet,
// TriggerConstantContractServlet, GetNowBlockServlet, GetChainParametersServlet,
// GetCanDelegatedMaxSizeServlet, BroadcastHexServlet, GetTransactionInfoByIdServlet; visible=false,
// so addresses are 41-prefixed hex and a missing account is `{}`), over an in-memory ledger that
// applies java-tron's rules a sweep depends on: a transaction's signature must recover its owner;
// its expiration must be after the head block's time and at most 24 h beyond it; its reference
// block must be one of ours; an owner account must exist. Fees as java-tron charges them (the
// same rules src/families/tron/sweep-fee.ts prices with, written here a second time from the java
// sources): bandwidth is the signed size plus 64 (Constant.MAX_RESULT_SIZE_IN_TX), charged by
// chainbase BandwidthProcessor.consume: a transaction that creates an account
// (contractCreateNewAccount: an AccountCreateContract, a TransferContract to a new address) takes
// staked bandwidth at getCreateNewAccountBandwidthRate (consumeBandwidthForCreateNewAccount) or
// burns getCreateAccountFee, 0.1 TRX (consumeFeeForCreateNewAccount), never the free points; any
// other takes staked bandwidth (useAccountNet), else the free 600 points a day (useFreeNet), else
// burns its bytes at getTransactionFee (useTransactionFee). The contract that creates the account
// burns getCreateNewAccountFeeInSystemContract, 1 TRX (CreateAccountActuator.calcFee;
// TransferActuator when `toAccount == null`). A TRC-20 transfer uses the energy delegated to its
// caller and burns the rest at getEnergyFee, up to its fee_limit. USDT's energy is mainnet's
// measured figure: 64,285 to an address that holds USDT, 130,285 to one that does not (TronScan;
// docs.catfee.io "usdt-transfer-energy-on-tron"). Each accepted transaction is mined in its own block.
//
// The same chain's reading face, for a real `chaingate index tron` beside the sweep: blocks with
// their transactions as java-tron's JsonFormat renders them (/wallet/getblockbynum,
// /wallet/getblockbylimitnext: txID, ret[0].contractRet, raw_data.contract[0] with 41-hex
// addresses; block 0 is mainnet's genesis) and a /jsonrpc answering eth_chainId, eth_blockNumber
// and eth_getLogs with the TRC-20 Transfer log of each successful token transfer. A buyer's token
// payment is a block of its own (payToken), as a wallet's transfer would be.

export const USDT_ENERGY_HOLDER = 64_285n;
export const USDT_ENERGY_NEW = 130_285n;

/** Mainnet's chain parameters (GET /wallet/getchainparameters), the ones a sweep prices with. */
export const PARAMS = { getEnergyFee: 100, getTransactionFee: 1000, getFreeNetLimit: 600, getCreateAccountFee: 100_000, getCreateNewAccountFeeInSystemContract: 1_000_000, getCreateNewAccountBandwidthRate: 1 };
/** Mainnet's energy totals (getaccountresource, 2025): energy per staked TRX = limit / weight. */
const TOTAL_ENERGY_LIMIT = 180_000_000_000n;
const TOTAL_ENERGY_WEIGHT = 19_000_000_000n;

interface Account {
  balance: bigint;
  freeNetUsed: bigint;
  /** Bandwidth from its own stake (getaccountresource NetLimit), and what it used of it. */
  netLimit: bigint;
  netUsed: bigint;
  /** Energy lent to it, as staked sun. */
  delegatedIn: bigint;
  /** What it may still lend (getcandelegatedmaxsize type 1). */
  lendable: bigint;
}

interface Info {
  id: string;
  fee: bigint;
  blockNumber: bigint;
  receipt: Record<string, unknown>;
  result?: 'FAILED';
  resMessage?: string;
}

export interface TronSweepSim {
  url: string;
  /** 41-hex of a T-address. */
  fund(address: string, sun: bigint): void;
  stake(address: string, lendableSun: bigint): void;
  /** Bandwidth points from the account's own stake (NetLimit). */
  stakeBandwidth(address: string, points: bigint): void;
  mintToken(token: string, address: string, amount: bigint): void;
  trx(address: string): bigint | null;
  token(token: string, address: string): bigint;
  delegatedTo(address: string): bigint;
  lendable(address: string): bigint;
  /** Moves the head block's clock forward (one new, empty block). */
  advance(ms: bigint): void;
  /** A TRC-20 transfer by `from` (holding the tokens, see mintToken) to `to`, mined in a block of its own; returns its txid. */
  payToken(token: string, from: string, to: string, amount: bigint): string;
  /** A TRX TransferContract by `from` (funded, see fund) to `to`, creating its account if need be, mined in a block of its own; returns its txid. */
  payTrx(from: string, to: string, amount: bigint): string;
  /** The head block's number. */
  head(): bigint;
  info(txid: string): Info | undefined;
  calls: Record<string, number>;
  /** Signed transactions the node accepted, raw_data decoded. */
  accepted: { txid: string; raw: TronRaw; signature: Uint8Array }[];
  close(): Promise<void>;
}

interface SimBlock {
  number: bigint;
  id: string;
  parentHash: string;
  timestamp: bigint;
  /** As /wallet/getblockbynum renders them. */
  transactions: Record<string, unknown>[];
  /** TRC-20 Transfer logs, as eth_getLogs renders them. */
  logs: { address: string; topics: string[]; data: string; blockNumber: string; blockHash: string; transactionHash: string; logIndex: string; removed: boolean }[];
}

const h41 = (t: string) => `41${(tronToHex(t) as string).slice(2)}`;

export async function startTronSweepSim(options: { tokens: string[] }): Promise<TronSweepSim> {
  const accounts = new Map<string, Account>();
  const balances = new Map<string, Map<string, bigint>>(options.tokens.map((t) => [h41(t), new Map()]));
  const infos = new Map<string, Info>();
  const blocks: SimBlock[] = [];
  const calls: Record<string, number> = {};
  const accepted: TronSweepSim['accepted'] = [];
  let clock = BigInt(Date.now()) - 60_000n;
  const mine = () => {
    const number = BigInt(blocks.length + 70_000_000);
    clock += 3_000n;
    const id = number.toString(16).padStart(16, '0') + createHash('sha256').update(`block ${number}`).digest('hex').slice(16);
    blocks.push({ number, id, parentHash: blocks.at(-1)?.id ?? '0'.repeat(64), timestamp: clock, transactions: [], logs: [] });
    return blocks.at(-1)!;
  };
  mine();
  const acct = (a: string) => accounts.get(a);
  const create = (a: string) => {
    const x = { balance: 0n, freeNetUsed: 0n, netLimit: 0n, netUsed: 0n, delegatedIn: 0n, lendable: 0n };
    accounts.set(a, x);
    return x;
  };
  const energyOf = (staked: bigint) => (staked / 1_000_000n) * TOTAL_ENERGY_LIMIT / TOTAL_ENERGY_WEIGHT;

  function execute(raw: TronRaw, txid: string, bytes: bigint): { ok: true } | { ok: false; code: string; message: string } {
    const head = blocks.at(-1)!;
    if (raw.expiration <= head.timestamp || raw.expiration > head.timestamp + 86_400_000n) {
      return { ok: false, code: 'TRANSACTION_EXPIRATION_ERROR', message: `Transaction expiration, transaction expiration time is ${raw.expiration}, but headBlockTime is ${head.timestamp}` };
    }
    if (!blocks.some((b) => (b.number & 0xffffn).toString(16).padStart(4, '0') === raw.refBlockBytes && b.id.slice(16, 32) === raw.refBlockHash)) return { ok: false, code: 'TAPOS_ERROR', message: 'Tapos check error' };
    if (infos.has(txid)) return { ok: false, code: 'DUP_TRANSACTION_ERROR', message: 'Dup transaction' };
    const c = raw.contract;
    const owner = acct(c.owner);
    if (!owner) return { ok: false, code: 'CONTRACT_VALIDATE_ERROR', message: `Validate ${c.type} error, no OwnerAccount.` };
    // Bandwidth first (BandwidthProcessor.consume runs before the contract executes).
    let fee = 0n;
    const createsAccount = (c.type === 'TransferContract' && !acct(c.to)) || c.type === 'AccountCreateContract';
    let receipt: Record<string, unknown>;
    if (createsAccount) {
      const cost = bytes * BigInt(PARAMS.getCreateNewAccountBandwidthRate);
      if (owner.netUsed + cost <= owner.netLimit) {
        owner.netUsed += cost;
        receipt = { net_usage: Number(cost) };
      } else {
        fee += BigInt(PARAMS.getCreateAccountFee);
        receipt = { net_fee: PARAMS.getCreateAccountFee };
      }
      // The actuator's own fee for the new account.
      fee += BigInt(PARAMS.getCreateNewAccountFeeInSystemContract);
    } else if (owner.netUsed + bytes <= owner.netLimit) {
      owner.netUsed += bytes;
      receipt = { net_usage: Number(bytes) };
    } else if (owner.freeNetUsed + bytes <= BigInt(PARAMS.getFreeNetLimit)) {
      owner.freeNetUsed += bytes;
      receipt = { net_usage: Number(bytes) };
    } else {
      fee += bytes * BigInt(PARAMS.getTransactionFee);
      receipt = { net_fee: Number(bytes * BigInt(PARAMS.getTransactionFee)) };
    }
    const fail = (message: string) => ({ ok: false as const, code: 'CONTRACT_VALIDATE_ERROR', message });
    switch (c.type) {
      case 'TransferContract': {
        if (owner.balance < c.amount + fee) return fail('Validate TransferContract error, balance is not sufficient.');
        owner.balance -= c.amount + fee;
        (acct(c.to) ?? create(c.to)).balance += c.amount;
        break;
      }
      case 'AccountCreateContract':
        if (acct(c.account)) return fail('Account has existed');
        if (owner.balance < fee) return fail('Validate CreateAccountActuator error, insufficient fee.');
        owner.balance -= fee;
        create(c.account);
        break;
      case 'DelegateResourceContract': {
        const receiver = acct(c.receiver);
        if (!receiver) return fail(`Account [${c.receiver}] does not exist`);
        if (c.balance > owner.lendable) return fail('delegateBalance must be less than or equal to available FreezeEnergyV2 balance');
        if (owner.balance < fee) return fail('balance is not sufficient');
        owner.balance -= fee;
        owner.lendable -= c.balance;
        receiver.delegatedIn += c.balance;
        break;
      }
      case 'UnDelegateResourceContract': {
        const receiver = acct(c.receiver)!;
        if (receiver.delegatedIn < c.balance) return fail('insufficient delegatedFrozenBalance(Energy), request=…');
        owner.balance -= fee;
        owner.lendable += c.balance;
        receiver.delegatedIn -= c.balance;
        break;
      }
      case 'TriggerSmartContract': {
        const ledger = balances.get(c.contract);
        if (!ledger || !c.data.startsWith('a9059cbb')) return fail('No contract or not a smart contract');
        const to = `41${c.data.slice(32, 72)}`;
        const amount = BigInt(`0x${c.data.slice(72)}`);
        const needed = (ledger.get(to) ?? 0n) > 0n ? USDT_ENERGY_HOLDER : USDT_ENERGY_NEW;
        const lent = energyOf(owner.delegatedIn);
        const burnEnergy = needed > lent ? needed - lent : 0n;
        const burn = burnEnergy * BigInt(PARAMS.getEnergyFee);
        owner.balance -= fee;
        const block = mine();
        if (burn > raw.feeLimit || burn > owner.balance) {
          let spent = raw.feeLimit; // bigint: no Math.min
          if (owner.balance < spent) spent = owner.balance;
          owner.balance -= spent;
          infos.set(txid, { id: txid, fee: fee + spent, blockNumber: block.number, receipt: { ...receipt, energy_usage_total: Number(needed), energy_fee: Number(spent), result: 'OUT_OF_ENERGY' }, result: 'FAILED', resMessage: Buffer.from('Not enough energy').toString('hex') });
          return { ok: true };
        }
        if ((ledger.get(c.owner) ?? 0n) < amount) {
          infos.set(txid, { id: txid, fee, blockNumber: block.number, receipt: { ...receipt, result: 'REVERT' }, result: 'FAILED', resMessage: Buffer.from('REVERT opcode executed').toString('hex') });
          return { ok: true };
        }
        owner.balance -= burn;
        ledger.set(c.owner, (ledger.get(c.owner) ?? 0n) - amount);
        ledger.set(to, (ledger.get(to) ?? 0n) + amount);
        infos.set(txid, { id: txid, fee: fee + burn, blockNumber: block.number, receipt: { ...receipt, energy_usage_total: Number(needed), energy_usage: Number(needed - burnEnergy), energy_fee: Number(burn), result: 'SUCCESS' } });
        return { ok: true };
      }
    }
    const block = mine();
    infos.set(txid, { id: txid, fee, blockNumber: block.number, receipt });
    return { ok: true };
  }

  const routes: Record<string, (body: Record<string, unknown>) => unknown> = {
    '/wallet/getchainparameters': () => ({ chainParameter: Object.entries(PARAMS).map(([key, value]) => ({ key, value })) }),
    '/wallet/getnowblock': () => blockJson(blocks.at(-1)!),
    '/walletsolidity/getnowblock': () => blockJson(blocks.at(-1)!),
    '/wallet/getaccount': (b) => {
      const a = acct(String(b.address));
      return a ? { address: b.address, ...(a.balance > 0n ? { balance: Number(a.balance) } : {}), create_time: 1767225600000 } : {};
    },
    '/wallet/getaccountresource': (b) => {
      const a = acct(String(b.address));
      if (!a) return {};
      const energy = energyOf(a.delegatedIn);
      return { freeNetLimit: PARAMS.getFreeNetLimit, ...(a.freeNetUsed ? { freeNetUsed: Number(a.freeNetUsed) } : {}), ...(a.netLimit ? { NetLimit: Number(a.netLimit) } : {}), ...(a.netUsed ? { NetUsed: Number(a.netUsed) } : {}), ...(energy ? { EnergyLimit: Number(energy) } : {}), TotalNetLimit: 43_200_000_000, TotalNetWeight: 26_000_000_000, TotalEnergyLimit: Number(TOTAL_ENERGY_LIMIT), TotalEnergyWeight: Number(TOTAL_ENERGY_WEIGHT) };
    },
    '/wallet/getcandelegatedmaxsize': (b) => {
      const a = acct(String(b.owner_address));
      return a?.lendable ? { max_size: Number(a.lendable) } : {};
    },
    '/wallet/triggerconstantcontract': (b) => {
      const ledger = balances.get(String(b.contract_address));
      if (!ledger) return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: Buffer.from('No contract or not a valid smart contract').toString('hex') } };
      const parameter = String(b.parameter);
      if (b.function_selector === 'balanceOf(address)') {
        return { result: { result: true }, energy_used: 935, constant_result: [(ledger.get(`41${parameter.slice(24, 64)}`) ?? 0n).toString(16).padStart(64, '0')] };
      }
      const to = `41${parameter.slice(24, 64)}`;
      return { result: { result: true }, energy_used: Number((ledger.get(to) ?? 0n) > 0n ? USDT_ENERGY_HOLDER : USDT_ENERGY_NEW), constant_result: [`${'0'.repeat(63)}1`] };
    },
    '/wallet/broadcasthex': (b) => {
      const bytes = Uint8Array.from(Buffer.from(String(b.transaction), 'hex'));
      const { raw: rawBytes, signatures } = decodeSigned(bytes);
      const raw = decodeRaw(rawBytes);
      const txid = createHash('sha256').update(rawBytes).digest('hex');
      const sig = signatures[0];
      const answer = (code: string, message: string) => ({ result: false, code, txid, message, transaction: '' });
      if (signatures.length !== 1 || sig?.length !== 65) return answer('SIGERROR', 'Validate signature error: miss sig or contract');
      const v = sig[64]! < 27 ? sig[64]! + 27 : sig[64]!;
      const signer = computeAddress(SigningKey.recoverPublicKey(`0x${txid}`, { r: `0x${Buffer.from(sig.subarray(0, 32)).toString('hex')}`, s: `0x${Buffer.from(sig.subarray(32, 64)).toString('hex')}`, v }));
      if (`41${signer.slice(2).toLowerCase()}` !== raw.contract.owner) {
        return answer('SIGERROR', `Validate signature error: ${hex41ToTron(`41${signer.slice(2)}`)} is signed by another key than the owner's`);
      }
      const result = execute(raw, txid, BigInt(bytes.length) + 64n);
      if (!result.ok) return answer(result.code, result.message);
      accepted.push({ txid, raw, signature: sig });
      const info = infos.get(txid)!;
      record(blocks.find((b) => b.number === info.blockNumber)!, txid, raw.contract, (info.receipt.result as string | undefined) ?? 'SUCCESS');
      return { result: true, code: 'SUCCESS', txid, message: '', transaction: '' };
    },
    '/wallet/gettransactioninfobyid': (b) => {
      const i = infos.get(String(b.value));
      if (!i) return {};
      return { id: i.id, ...(i.fee ? { fee: Number(i.fee) } : {}), blockNumber: Number(i.blockNumber), blockTimeStamp: Number(clock), contractResult: [''], receipt: i.receipt, ...(i.result ? { result: i.result, resMessage: i.resMessage } : {}) };
    },
    '/wallet/gettransactionfrompending': () => ({}),
  };
  function blockJson(b: SimBlock, withTransactions = false) {
    const header = { blockID: b.id, block_header: { raw_data: { number: Number(b.number), txTrieRoot: '0'.repeat(64), witness_address: '41'.padEnd(42, '0'), parentHash: b.parentHash, version: 32, timestamp: Number(b.timestamp) }, witness_signature: '' } };
    return withTransactions && b.transactions.length > 0 ? { ...header, transactions: b.transactions } : header;
  }
  const blockAt = (n: bigint) => blocks.find((b) => b.number === n);
  routes['/wallet/getblockbynum'] = (b) => {
    if (Number(b.num) === 0) return MAINNET_GENESIS;
    const block = blockAt(BigInt(Number(b.num)));
    return block ? blockJson(block, true) : {};
  };
  routes['/wallet/getblockbylimitnext'] = (b) => {
    const found = blocks.filter((x) => x.number >= BigInt(Number(b.startNum)) && x.number < BigInt(Number(b.endNum)));
    return found.length ? { block: found.map((x) => blockJson(x, true)) } : {};
  };

  /** A transaction in its block, as java-tron renders it; a successful TRC-20 transfer leaves its Transfer log. */
  function record(block: SimBlock, txid: string, c: TronContract, contractRet: string) {
    const { type, ...fields } = c;
    const value: Record<string, unknown> =
      c.type === 'TransferContract' ? { amount: Number(c.amount), owner_address: c.owner, to_address: c.to }
      : c.type === 'TriggerSmartContract' ? { owner_address: c.owner, contract_address: c.contract, data: c.data }
      : { ...fields, owner_address: c.owner };
    block.transactions.push({ txID: txid, ret: [{ contractRet }], raw_data: { contract: [{ type, parameter: { value, type_url: `type.googleapis.com/protocol.${type}` } }] } });
    if (c.type === 'TriggerSmartContract' && contractRet === 'SUCCESS') {
      block.logs.push({
        address: `0x${c.contract.slice(2)}`,
        topics: [TRANSFER_TOPIC, `0x${c.owner.slice(2).padStart(64, '0')}`, `0x${c.data.slice(32, 72).padStart(64, '0')}`],
        data: `0x${c.data.slice(72)}`,
        blockNumber: `0x${block.number.toString(16)}`,
        blockHash: `0x${block.id}`,
        transactionHash: `0x${txid}`,
        logIndex: `0x${block.logs.length.toString(16)}`,
        removed: false,
      });
    }
  }

  /** java-tron's /jsonrpc, as far as the reader asks it. */
  function jsonRpc(call: { method: string; params?: unknown[] }): unknown {
    if (call.method === 'eth_chainId') return '0x2b6653dc';
    if (call.method === 'eth_blockNumber') return `0x${blocks.at(-1)!.number.toString(16)}`;
    if (call.method === 'eth_getLogs') {
      const f = (call.params?.[0] ?? {}) as { fromBlock: string; toBlock: string; address?: string; topics?: (string | string[] | null)[] };
      const [from, to] = [BigInt(f.fromBlock), BigInt(f.toBlock)];
      const matches = (want: string | string[] | null | undefined, got: string | undefined) => want == null || (Array.isArray(want) ? want : [want]).some((w) => w.toLowerCase() === got?.toLowerCase());
      return blocks
        .filter((b) => b.number >= from && b.number <= to)
        .flatMap((b) => b.logs)
        .filter((l) => (f.address === undefined || f.address.toLowerCase() === l.address.toLowerCase()) && (f.topics ?? []).every((want, i) => matches(want, l.topics[i])));
    }
    throw new Error(`the method ${call.method} does not exist/is not available`);
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      calls[path] = (calls[path] ?? 0) + 1;
      if (path === '/jsonrpc') {
        const call = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
        let payload: Record<string, unknown>;
        try {
          payload = { result: jsonRpc(call) };
        } catch (err) {
          payload = { error: { code: -32601, message: (err as Error).message } };
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...payload }));
        return;
      }
      const route = routes[path];
      if (!route) {
        res.writeHead(404).end();
        return;
      }
      let answer: unknown;
      try {
        answer = route(body ? (JSON.parse(body) as Record<string, unknown>) : {});
      } catch (err) {
        answer = { Error: `class java.lang.IllegalArgumentException : ${(err as Error).message}` };
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  const local = await listenLocal(server);

  return {
    url: local.url,
    fund: (a, sun) => {
      (acct(h41(a)) ?? create(h41(a))).balance += sun;
    },
    stake: (a, sun) => {
      (acct(h41(a)) ?? create(h41(a))).lendable += sun;
    },
    stakeBandwidth: (a, points) => {
      (acct(h41(a)) ?? create(h41(a))).netLimit += points;
    },
    mintToken: (token, a, amount) => {
      const ledger = balances.get(h41(token))!;
      ledger.set(h41(a), (ledger.get(h41(a)) ?? 0n) + amount);
    },
    trx: (a) => acct(h41(a))?.balance ?? null,
    token: (token, a) => balances.get(h41(token))?.get(h41(a)) ?? 0n,
    delegatedTo: (a) => acct(h41(a))?.delegatedIn ?? 0n,
    lendable: (a) => acct(h41(a))?.lendable ?? 0n,
    advance: (ms) => {
      clock += ms;
      mine();
    },
    payToken: (token, from, to, amount) => {
      const ledger = balances.get(h41(token))!;
      if ((ledger.get(h41(from)) ?? 0n) < amount) throw new Error(`${from} holds less than ${amount}`);
      ledger.set(h41(from), ledger.get(h41(from))! - amount);
      ledger.set(h41(to), (ledger.get(h41(to)) ?? 0n) + amount);
      const data = `a9059cbb${h41(to).slice(2).padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;
      const txid = createHash('sha256').update(`payment ${blocks.length} ${from} ${to} ${amount}`).digest('hex');
      record(mine(), txid, { type: 'TriggerSmartContract', owner: h41(from), contract: h41(token), callValue: 0n, data }, 'SUCCESS');
      return txid;
    },
    payTrx: (from, to, amount) => {
      const owner = acct(h41(from));
      if (!owner || owner.balance < amount) throw new Error(`${from} holds less than ${amount} sun`);
      owner.balance -= amount; // the buyer's own bandwidth is not the sweep's concern
      (acct(h41(to)) ?? create(h41(to))).balance += amount;
      const txid = createHash('sha256').update(`trx payment ${blocks.length} ${from} ${to} ${amount}`).digest('hex');
      record(mine(), txid, { type: 'TransferContract', owner: h41(from), to: h41(to), amount }, 'SUCCESS');
      return txid;
    },
    head: () => blocks.at(-1)!.number,
    info: (txid) => infos.get(txid),
    calls,
    accepted,
    close: () => local.close(),
  };
}
