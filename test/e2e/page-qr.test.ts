import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { parseUnits } from '../../src/domain/money.ts';
import { skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { inBrowser, openBrowser, PHONE, skipWithoutChromium, type TestBrowser } from '../helpers/browser.ts';

// The QR code the hosted page draws, read back as a phone's camera would: the pixels Chromium
// rendered for the page's <img> (at the phone's device pixel ratio) decoded with jsQR. What a
// wallet scans must be the payment's URI, in the chain's own standard with the amount and the token
// (docs/hosted-page.md#wallet-links), and the same text as the "Open in wallet app" link.

// jsQR is CommonJS whose types say `export default`: required, so the types and the value agree.
const jsQR = createRequire(import.meta.url)('jsqr') as typeof import('jsqr').default;

declare const document: any;
declare const window: any;
declare function btoa(data: string): string;

const ETH_DEPOSIT = evmAddresses(1, 31)[0]!;
const BTC_DEPOSIT = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const SOL_DEPOSITS = ['So11111111111111111111111111111111111111112', '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin'];
const TON_DEPOSITS = ['UQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqEBI', 'UQBvW8Z5huBkMJYdnfAEM5JqTNkuWX3diqYENkWsIL0XggGG'];
const TRON_DEPOSIT = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';
const USDT_ETHEREUM = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const USDT_TON = 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs';

interface Payment {
  id: string;
  amount: string;
  decimals: number;
  paymentAddress: string;
  paymentUri: string;
  tokenAddress: string | null;
}

/** Each case: the chain and coin a buyer picks, and the URI its standard says a wallet must get. */
const CASES: { chain: string; coin: string; expected(p: Payment): string }[] = [
  { chain: 'ethereum', coin: 'USDT', expected: (p) => `ethereum:${USDT_ETHEREUM}@1/transfer?address=${p.paymentAddress}&uint256=${parseUnits(p.amount, 6)}` },
  { chain: 'bitcoin', coin: 'BTC', expected: (p) => `bitcoin:${p.paymentAddress}?amount=${p.amount}` },
  { chain: 'solana', coin: 'SOL', expected: (p) => `solana:${p.paymentAddress}?amount=${p.amount}` },
  { chain: 'solana', coin: 'USDC', expected: (p) => `solana:${p.paymentAddress}?amount=${p.amount}&spl-token=${USDC_MINT}` },
  { chain: 'ton', coin: 'TON', expected: (p) => `ton://transfer/${p.paymentAddress}?amount=${parseUnits(p.amount, 9)}` },
  { chain: 'ton', coin: 'USDT', expected: (p) => `ton://transfer/${p.paymentAddress}?jetton=${USDT_TON}&amount=${parseUnits(p.amount, 6)}` },
  // No payment URI is shared by Tron wallets: the QR code is the address (docs/hosted-page.md#wallet-links).
  { chain: 'tron', coin: 'USDT', expected: (p) => p.paymentAddress },
];

/** The QR image as the screen shows it: its rendered pixels, RGBA, at the device pixel ratio. */
async function qrPixels(b: TestBrowser): Promise<{ width: number; height: number; data: Uint8ClampedArray }> {
  await b.page.waitForFunction(() => document.querySelector('[data-slot="qr"]')?.complete && document.querySelector('[data-slot="qr"]').naturalWidth > 0);
  const { width, height, base64 } = await b.page.evaluate(() => {
    const img = document.querySelector('[data-slot="qr"]');
    const box = img.getBoundingClientRect();
    const scale = window.devicePixelRatio;
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(box.width * scale);
    canvas.height = Math.round(box.height * scale);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    const bytes = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return { width: canvas.width, height: canvas.height, base64: btoa(binary) };
  });
  return { width, height, data: new Uint8ClampedArray(Buffer.from(base64, 'base64')) };
}

async function newInvoice(d: TestDaemon): Promise<string> {
  const res = await d.signed('POST', '/api/v1/invoices', { orderId: `order-${Math.random()}`, amount: '2500', currency: 'USD' });
  assert.equal(res.status, 201, res.text);
  return res.json.data.id as string;
}

describe('hosted page QR codes, decoded from Chromium on sqlite', { skip: skipWithoutChromium() || (await skipUnless('sqlite')) }, () => {
  test('EVM token, bitcoin, Solana SOL and USDC, TON and a jetton, Tron: the QR holds the payment URI', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    await d.seedPool('ethereum', [ETH_DEPOSIT]);
    await d.seedPool('bitcoin', [BTC_DEPOSIT]);
    await d.seedPool('solana', SOL_DEPOSITS);
    await d.seedPool('ton', TON_DEPOSITS);
    await d.seedPool('tron', [TRON_DEPOSIT]);
    const b = await openBrowser(t, { allowedOrigins: [d.url], viewport: PHONE, isMobile: true });
    const decoded: string[] = [];
    await inBrowser(b, 'qr-decode', async () => {
      for (const c of CASES) {
        const id = await newInvoice(d);
        const res = await d.plain('POST', `/checkout/api/v1/invoices/${id}/checkout`, { blockchain: c.chain, cryptoCurrency: c.coin });
        assert.equal(res.status, 201, res.text);
        const p = res.json.data.payment as Payment;
        // Reopening the page resumes the payment: the pay view with its QR code.
        await b.page.goto(`${d.url}/i/${id}`);
        await b.page.waitForSelector('[data-view="pay"]:not([hidden])');
        const pixels = await qrPixels(b);
        const code = jsQR(pixels.data, pixels.width, pixels.height);
        assert.ok(code, `${c.chain} ${c.coin}: the QR code decodes`);
        const want = c.expected(p);
        assert.equal(code.data, want, `${c.chain} ${c.coin}`);
        assert.equal(code.data, p.paymentUri, `${c.chain} ${c.coin}: the API's paymentUri`);
        const link = b.page.locator('[data-slot="uri"]');
        if (c.chain === 'tron') assert.ok(await link.isHidden(), 'no wallet link for a bare address');
        else assert.equal(await link.getAttribute('href'), code.data, `${c.chain} ${c.coin}: "Open in wallet app" opens what the QR says`);
        decoded.push(code.data);
      }
      assert.equal(new Set(decoded).size, CASES.length, 'a distinct URI for each payment');
      assert.deepEqual(b.problems, []);
    });
  });
});
