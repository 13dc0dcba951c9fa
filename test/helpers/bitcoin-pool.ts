import assert from 'node:assert/strict';
import type { EntityManager } from '@mikro-orm/sql';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory, type BIP32Interface } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { Mnemonic } from 'ethers';
import type { PaymentStatus } from '../../src/domain/lifecycle.ts';
import type { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { runCli, type CliResult } from './cli.ts';

// What the bitcoin sweep and refund tests through the CLI share: the seed of the deposit pool on
// regtest, its BIP84 account key, the CLI run in a folder with its exit codes checked, and the
// hand-made payments leasing the pool's addresses.

bitcoin.initEccLib(ecc);
export const regtest = bitcoin.networks.regtest;
export const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** PHRASE's BIP84 testnet account (m/84'/1'/0'): the pool's addresses are its receive chain. */
export const ACCOUNT: BIP32Interface = BIP32Factory(ecc)
  .fromSeed(Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex'), bitcoin.networks.testnet)
  .derivePath("m/84'/1'/0'");
export const TPUB84 = ACCOUNT.neutered().toBase58();

/** A regtest P2WPKH address no key of the tests holds, told apart by `byte`. */
export const regtestAddress = (byte: number): string => bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, byte), network: regtest }).address!;

/** Satoshi the raw transactions a node received pay an address. */
export function paidTo(raws: string[], address: string): bigint {
  let sum = 0n;
  for (const raw of raws) {
    for (const out of bitcoin.Transaction.fromHex(raw).outs) {
      if (bitcoin.address.fromOutputScript(out.script, regtest) === address) sum += out.value;
    }
  }
  return sum;
}

/** The CLI in `dir`: `ok` asserts exit 0, `refused` exit 2 with stderr matching `pattern`. */
export function cliIn(env: Record<string, string>, dir: string) {
  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { ...env, ...extra }, { cwd: dir });
  const ok = async (args: string[]): Promise<CliResult> => {
    const r = await cli(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  const refused = async (args: string[], pattern: RegExp, extra: Record<string, string> = {}): Promise<CliResult> => {
    const r = await cli(args, extra);
    assert.equal(r.code, 2, `${args.join(' ')} should be refused: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, pattern);
    return r;
  };
  return { cli, ok, refused };
}

export interface RegtestPayment {
  referenceId: string;
  status: PaymentStatus;
  /** The pool address it leases. */
  address: string;
  /** BTC, as the payment stores it; expected is the same. */
  amount: string;
  receivedAmount: string;
  requiredConfirmations: number;
  transactionHash?: string | null;
  completedAt?: Date | null;
  metadata?: Record<string, unknown>;
}

/** A bitcoin regtest payment of the invoice, expired a minute ago, and its pool address leased to it. */
export async function leasedPayment(em: EntityManager, invoice: Invoice, merchantId: string, p: RegtestPayment): Promise<Payment> {
  const payment = em.create(Payment, {
    referenceId: p.referenceId,
    invoice,
    merchant: em.getReference(MerchantPoint, merchantId),
    status: p.status,
    blockchain: 'bitcoin',
    network: 'REGTEST',
    isTestnet: true,
    cryptoCurrency: 'BTC',
    decimals: 8,
    tokenAddress: null,
    amount: p.amount,
    expectedAmount: p.amount,
    receivedAmount: p.receivedAmount,
    address: p.address,
    requiredConfirmations: p.requiredConfirmations,
    transactionHash: p.transactionHash ?? null,
    blockNumber: null,
    contractAddress: null,
    externalId: null,
    externalIdUuid: null,
    metadata: p.metadata ?? {},
    expiresAt: new Date(Date.now() - 60_000),
    completedAt: p.completedAt ?? null,
  });
  await em.flush();
  await em.nativeUpdate(WalletAddress, { address: p.address, chain: 'bitcoin' }, { status: 'LEASED', paymentId: payment.id, leasedAt: new Date() });
  return payment;
}
