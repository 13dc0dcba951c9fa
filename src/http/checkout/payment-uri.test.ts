import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAddress } from '@solana/kit';
import { Address } from '@ton/core';
import { paymentUri } from './payment-uri.ts';

const EVM = '0x1111111111111111111111111111111111111111';
const USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

test('bitcoin gets a BIP21 URI with the amount in BTC', () => {
  assert.equal(
    paymentUri({ family: 'bitcoin', chainId: null, address: 'bc1qexample', amount: '0.00041667', decimals: 8, tokenAddress: null }),
    'bitcoin:bc1qexample?amount=0.00041667',
  );
});

test('a taproot deposit gets the same BIP21 URI: bitcoin:bc1p…, tb1p…, bcrt1p… with the amount in BTC', () => {
  for (const address of [
    'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr',
    'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c',
    'bcrt1pfwgc6v0jy3ssy8k4fc654jwuh055hx8delfkzkmkcp5tpq3z4plsy66w0y',
  ]) {
    assert.equal(
      paymentUri({ family: 'bitcoin', chainId: null, address, amount: '0.00041667', decimals: 8, tokenAddress: null }),
      `bitcoin:${address}?amount=0.00041667`,
    );
  }
});

test('an EVM native coin gets EIP-681 with the value in wei and the chain id', () => {
  assert.equal(
    paymentUri({ family: 'evm', chainId: 1, address: EVM, amount: '0.008333333333333334', decimals: 18, tokenAddress: null }),
    `ethereum:${EVM}@1?value=8333333333333334`,
  );
  assert.equal(
    paymentUri({ family: 'evm', chainId: 137, address: EVM, amount: '50', decimals: 18, tokenAddress: null }),
    `ethereum:${EVM}@137?value=50000000000000000000`,
  );
});

test('an EVM token gets an EIP-681 transfer call in atomic units', () => {
  assert.equal(
    paymentUri({ family: 'evm', chainId: 1, address: EVM, amount: '25', decimals: 6, tokenAddress: USDT }),
    `ethereum:${USDT}@1/transfer?address=${EVM}&uint256=25000000`,
  );
});

test('amounts that do not fit the decimals are left out, never rounded', () => {
  assert.equal(paymentUri({ family: 'evm', chainId: 1, address: EVM, amount: '0.1234567', decimals: 6, tokenAddress: USDT }), `ethereum:${USDT}@1/transfer?address=${EVM}`);
  assert.equal(paymentUri({ family: 'bitcoin', chainId: null, address: 'bc1q', amount: '0', decimals: 8, tokenAddress: null }), 'bitcoin:bc1q');
});

// The wallet side of each payment URI, read the way the standard says a wallet reads it. The
// reference parsers (@solana/pay's parseURL, eth-url-parser) are not dependencies of this
// repository, so each check below follows the text of the standard it names, field by field.

/**
 * Solana Pay transfer request (docs.solanapay.com/spec, "Specification: Transfer Request"): the
 * recipient a base58 32-byte key; `amount` a non-negative decimal in user units with a leading 0,
 * no exponent, no more decimals than the coin has (else the URL is malformed); `spl-token` a mint key.
 */
function parseSolanaPay(uri: string, decimalsOf: (mint: string | null) => number) {
  const url = new URL(uri);
  assert.equal(url.protocol, 'solana:');
  const recipient = decodeURIComponent(url.pathname);
  assert.ok(isAddress(recipient), `recipient ${recipient} is a base58 32-byte key`);
  for (const key of url.searchParams.keys()) assert.ok(['amount', 'spl-token', 'reference', 'label', 'message', 'memo'].includes(key), `unknown field ${key}`);
  const splToken = url.searchParams.get('spl-token');
  if (splToken !== null) assert.ok(isAddress(splToken), 'spl-token is a mint key');
  const amount = url.searchParams.get('amount');
  if (amount !== null) {
    assert.match(amount, /^\d+(\.\d+)?$/, 'a plain decimal, no exponent');
    assert.ok((amount.split('.')[1]?.length ?? 0) <= decimalsOf(splToken), 'no more decimals than the coin has');
  }
  return { recipient, amount, splToken };
}

/** TON transfer link (github.com/tonkeeper/wallet-api): ton://transfer/<address>?amount=<nanotons>, with jetton=<master> for a jetton. */
function parseTonTransfer(uri: string) {
  const url = new URL(uri);
  assert.equal(url.protocol, 'ton:');
  assert.equal(url.host, 'transfer');
  const address = url.pathname.slice(1);
  Address.parse(address); // throws on a bad checksum or form
  const jetton = url.searchParams.get('jetton');
  if (jetton !== null) Address.parse(jetton);
  const amount = url.searchParams.get('amount');
  if (amount !== null) assert.match(amount, /^\d+$/, 'atomic units: an integer');
  return { address, amount, jetton };
}

const SOL_DEPOSIT = 'So11111111111111111111111111111111111111112';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const TON_DEPOSIT = 'UQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqEBI';
const TON_USDT = 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs';

test('solana: a Solana Pay transfer request with the amount in SOL, not lamports', () => {
  const uri = paymentUri({ family: 'solana', chainId: null, address: SOL_DEPOSIT, amount: '0.166666667', decimals: 9, tokenAddress: null });
  assert.equal(uri, `solana:${SOL_DEPOSIT}?amount=0.166666667`);
  assert.deepEqual(parseSolanaPay(uri, () => 9), { recipient: SOL_DEPOSIT, amount: '0.166666667', splToken: null });
});

test('solana: a token names its mint in spl-token and the amount in token units', () => {
  const uri = paymentUri({ family: 'solana', chainId: null, address: SOL_DEPOSIT, amount: '25', decimals: 6, tokenAddress: USDC_MINT });
  assert.equal(uri, `solana:${SOL_DEPOSIT}?amount=25&spl-token=${USDC_MINT}`);
  assert.deepEqual(parseSolanaPay(uri, (mint) => (mint === USDC_MINT ? 6 : 9)), { recipient: SOL_DEPOSIT, amount: '25', splToken: USDC_MINT });
  // An amount finer than the mint (verbatim pricing) is left out rather than rounded: the wallet asks.
  const loose = paymentUri({ family: 'solana', chainId: null, address: SOL_DEPOSIT, amount: '0.0000001', decimals: 6, tokenAddress: USDC_MINT });
  assert.equal(parseSolanaPay(loose, () => 6).amount, null);
});

test('ton: a transfer link with nanotons; a jetton names its master and its atomic units', () => {
  const native = paymentUri({ family: 'ton', chainId: null, address: TON_DEPOSIT, amount: '7.25', decimals: 9, tokenAddress: null });
  assert.equal(native, `ton://transfer/${TON_DEPOSIT}?amount=7250000000`);
  assert.deepEqual(parseTonTransfer(native), { address: TON_DEPOSIT, amount: '7250000000', jetton: null });
  const jetton = paymentUri({ family: 'ton', chainId: null, address: TON_DEPOSIT, amount: '24.5', decimals: 6, tokenAddress: TON_USDT });
  assert.equal(jetton, `ton://transfer/${TON_DEPOSIT}?jetton=${TON_USDT}&amount=24500000`);
  assert.deepEqual(parseTonTransfer(jetton), { address: TON_DEPOSIT, amount: '24500000', jetton: TON_USDT });
});

test('tron: no payment URI standard wallets share, so the bare address (amount and contract are shown beside it)', () => {
  assert.equal(paymentUri({ family: 'tron', chainId: null, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', amount: '25', decimals: 6, tokenAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' }), 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
});
