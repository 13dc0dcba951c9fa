import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createChaingateClient } from '../../src/sdk/client.ts';
import { signWebhookPayload } from '../../src/sdk/verify-webhook.ts';
import { docBlocks } from '../helpers/doc-examples.ts';
import { checkDeliveries, checkWalkthrough, postDelivery, runProgram, startPhpServer, startSdkShop, stepsOf, type StartReceiver } from '../helpers/sdk-shop.ts';

// The PHP client (sdk/php: ext-curl and ext-json only) against a real `chaingate serve`, driven
// with Debian's php-cli as a child process: every gateway route, an idempotent replay byte for
// byte, errors with their code, status and request id, and a real webhook delivery verified by a
// plain PHP endpoint under `php -S` (php://input). Also its own test script (the shared cases of
// sdk/cases, with and without bcmath) and the examples of docs/sdk.md.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SDK = join(ROOT, 'sdk/php');
const PHP = process.env.CHAINGATE_TEST_PHP ?? 'php';
const phpReceiver: StartReceiver = (t, apiSecret) => startPhpServer(t, PHP, join(SDK, 'examples/webhook-receiver.php'), { CHAINGATE_API_SECRET: apiSecret });

test('the PHP test script passes with the extensions (bcmath, curl) and without any (php -n)', async () => {
  const full = await runProgram(PHP, [join(SDK, 'tests/run.php')]);
  assert.equal(full.code, 0, full.stdout + full.stderr);
  const passed = Number(/(\d+) passed, 0 failed\n$/.exec(full.stdout)?.[1]);
  assert.ok(passed >= 150, full.stdout);
  assert.doesNotMatch(full.stdout, /without bcmath|need ext-curl/, 'Debian php-bcmath and php-curl are installed');
  // No extension loaded: the settlement falls back to exact string arithmetic, and the pure parts hold.
  const bare = await runProgram(PHP, ['-n', join(SDK, 'tests/run.php')]);
  assert.equal(bare.code, 0, bare.stdout + bare.stderr);
  assert.match(bare.stdout, /\d+ passed, 0 failed \(without bcmath\)\n$/);
});

test('the PHP walkthrough drives every route of a real serve; a real delivery verifies in a plain PHP endpoint, tampered and stale ones are refused', async (t) => {
  const shop = await startSdkShop(t, phpReceiver);
  const steps = stepsOf(await runProgram(PHP, [join(SDK, 'examples/walkthrough.php')], shop.scriptEnv));
  await checkWalkthrough(shop, steps);
  await checkDeliveries(shop, String(steps.replayed!.id));
});

test('the PHP examples of docs/sdk.md create an invoice on a real serve and fulfil on payment.completed comparing amounts', async (t) => {
  const blocks = docBlocks(ROOT).filter((b) => b.file === 'docs/sdk.md' && b.lang === 'php');
  assert.equal(blocks.length, 2, 'the invoice script and webhook.php');
  for (const b of blocks) assert.ok(b.body.split('\n').length <= 14, 'about ten lines');
  const shop = await startSdkShop(t, phpReceiver);
  // A project folder as Composer would leave it: vendor/autoload.php loads the library.
  const dir = mkdtempSync(join(tmpdir(), 'cg-php-doc-'));
  mkdirSync(join(dir, 'vendor'));
  writeFileSync(join(dir, 'vendor/autoload.php'), `<?php require ${JSON.stringify(join(SDK, 'autoload.php'))};\n`);
  writeFileSync(join(dir, 'create-invoice.php'), blocks[0]!.body);
  writeFileSync(join(dir, 'webhook.php'), blocks[1]!.body);

  const created = await runProgram(PHP, ['create-invoice.php'], shop.scriptEnv, { cwd: dir });
  assert.equal(created.code, 0, created.stderr);
  const invoiceId = /\/i\/([a-z0-9]+)\n$/.exec(created.stdout)?.[1];
  assert.ok(invoiceId, created.stdout);
  const invoice = await createChaingateClient({ baseUrl: shop.serve.url, apiKey: shop.creds.apiKey, apiSecret: shop.creds.apiSecret }).getInvoice(invoiceId);
  assert.deepEqual([invoice.orderId, invoice.amount, invoice.status], ['order-1042', '2500', 'OPEN']);

  // webhook.php served as a shop serves it, and sent what chaingate sends.
  const endpoint = await startPhpServer(t, PHP, join(dir, 'webhook.php'), shop.scriptEnv);
  const completed = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8').match(/`payment\.completed`:\n\n```json\n([\s\S]*?)\n```/)![1]!;
  const event = JSON.parse(completed) as { data: { payment: Record<string, unknown> } };
  Object.assign(event.data.payment, { receivedAmount: '25.000001', received_amount: '25.000001', amount_difference: '0.000001' });
  const raw = Buffer.from(JSON.stringify(event));
  const now = Math.floor(Date.now() / 1000);
  const signed = { 'X-Webhook-Signature': signWebhookPayload(shop.creds.apiSecret, now, raw), 'X-Webhook-Timestamp': String(now) };
  assert.deepEqual(await postDelivery(endpoint.url, raw, signed), { status: 200, text: '' });
  assert.deepEqual(await postDelivery(endpoint.url, Buffer.from(raw.toString().replace('25.000001', '25')), signed), { status: 400, text: 'mismatch' });
  assert.deepEqual(await postDelivery(endpoint.url, raw, {}), { status: 400, text: 'missing' });
  const logged = await endpoint.serverOutput();
  assert.match(logged, /order order-1042: overpaid 0\.000001/);
  assert.equal(logged.match(/order order-1042/g)?.length, 1, 'only the verified delivery is acted on');
});

test('composer.json is valid and maps Chaingate\\ to src/, every class loads through autoload.php, every PHP block of the SDK docs lints', async () => {
  const composer = JSON.parse(readFileSync(join(SDK, 'composer.json'), 'utf8')) as { name: string; require: Record<string, string>; autoload: { 'psr-4': Record<string, string> } };
  assert.match(composer.name, /^[a-z0-9]([_.-]?[a-z0-9]+)*\/[a-z0-9](([_.]?|-{0,2})[a-z0-9]+)*$/, 'a valid Composer package name');
  assert.deepEqual(composer.require, { php: '>=8.1', 'ext-curl': '*', 'ext-json': '*' }, 'no other dependency');
  assert.deepEqual(composer.autoload['psr-4'], { 'Chaingate\\': 'src/' });
  const classes = readdirSync(join(SDK, 'src')).filter((f) => f.endsWith('.php')).map((f) => `Chaingate\\${f.slice(0, -4)}`);
  assert.ok(classes.length >= 8);
  const code = 'require $argv[1]; foreach (array_slice($argv, 2) as $c) { if (!class_exists($c)) { exit("missing $c"); } } echo Chaingate\\Client::VERSION;';
  const loaded = await runProgram(PHP, ['-r', code, '--', join(SDK, 'autoload.php'), ...classes]);
  assert.equal(loaded.code, 0, loaded.stdout + loaded.stderr);
  const pyVersion = /^version = "([^"]+)"/m.exec(readFileSync(join(ROOT, 'sdk/python/pyproject.toml'), 'utf8'))?.[1];
  assert.equal(loaded.stdout, pyVersion, 'the PHP and Python libraries carry one version');
  assert.match(readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8'), new RegExp(`chaingate-php/${pyVersion!.replaceAll('.', '\\.')}`), 'docs/sdk.md states the version');

  const blocks = docBlocks(ROOT).filter((b) => b.file.startsWith('docs/sdk') && b.lang === 'php');
  assert.ok(blocks.length >= 4);
  const dir = mkdtempSync(join(tmpdir(), 'cg-php-blocks-'));
  for (const [i, b] of blocks.entries()) {
    const file = join(dir, `block-${i}.php`);
    writeFileSync(file, b.body.startsWith('<?php') ? b.body : `<?php\n${b.body}`);
    const lint = await runProgram(PHP, ['-l', file]);
    assert.equal(lint.code, 0, `${b.file}:${b.line}: ${lint.stdout}${lint.stderr}`);
  }
});
