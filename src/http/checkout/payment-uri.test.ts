import { test } from 'node:test';
import assert from 'node:assert/strict';
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

test('other chains get the bare address; amounts that do not fit the decimals are left out', () => {
  assert.equal(paymentUri({ family: 'tron', chainId: null, address: 'TXYZ', amount: '1', decimals: 6, tokenAddress: 'TR7' }), 'TXYZ');
  assert.equal(paymentUri({ family: 'solana', chainId: null, address: 'So1', amount: '1', decimals: 9, tokenAddress: null }), 'So1');
  assert.equal(paymentUri({ family: 'evm', chainId: 1, address: EVM, amount: '0.1234567', decimals: 6, tokenAddress: USDT }), `ethereum:${USDT}@1/transfer?address=${EVM}`);
  assert.equal(paymentUri({ family: 'bitcoin', chainId: null, address: 'bc1q', amount: '0', decimals: 8, tokenAddress: null }), 'bitcoin:bc1q');
});
