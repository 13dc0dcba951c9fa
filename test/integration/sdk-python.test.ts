import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createChaingateClient } from '../../src/sdk/client.ts';
import { signWebhookPayload } from '../../src/sdk/verify-webhook.ts';
import { docBlocks } from '../helpers/doc-examples.ts';
import { checkDeliveries, checkWalkthrough, runProgram, startLineServer, startSdkShop, stepsOf, type StartReceiver } from '../helpers/sdk-shop.ts';

// The Python client (sdk/python, standard library only) against a real `chaingate serve`, driven
// with Debian's python3 as a child process: every gateway route, an idempotent replay byte for
// byte, errors with their code, status and request id, and a real webhook delivery verified by a
// receiver written in Python. Also its own unittest suite (the shared cases of sdk/cases) and the
// examples of docs/sdk.md.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PY = join(ROOT, 'sdk/python');
const PYTHON = process.env.CHAINGATE_TEST_PYTHON ?? 'python3';
const withSdk = { PYTHONPATH: join(PY, 'src'), PYTHONDONTWRITEBYTECODE: '1' };
const pythonReceiver: StartReceiver = (t, apiSecret) => startLineServer(t, PYTHON, [join(PY, 'examples/webhook_receiver.py')], { CHAINGATE_API_SECRET: apiSecret, PYTHONDONTWRITEBYTECODE: '1' });

test('the Python unit tests pass: the shared cases of sdk/cases and the retry discipline (python -m unittest)', async () => {
  const run = await runProgram(PYTHON, ['-m', 'unittest', 'discover', '-s', join(PY, 'tests'), '-t', PY], withSdk);
  assert.equal(run.code, 0, run.stderr);
  const ran = Number(/Ran (\d+) tests?/.exec(run.stderr)?.[1]);
  assert.ok(ran >= 13, `ran ${ran} tests:\n${run.stderr}`);
  assert.match(run.stderr, /\nOK\s*$/);
});

test('the Python walkthrough drives every route of a real serve; a real delivery verifies in a Python receiver, tampered and stale ones are refused', async (t) => {
  const shop = await startSdkShop(t, pythonReceiver);
  const steps = stepsOf(await runProgram(PYTHON, [join(PY, 'examples/walkthrough.py')], { ...shop.scriptEnv, PYTHONDONTWRITEBYTECODE: '1' }));
  await checkWalkthrough(shop, steps);
  await checkDeliveries(shop, String(steps.replayed!.id));
});

test('the Python example of docs/sdk.md creates an invoice on a real serve and fulfils on payment.completed comparing amounts', async (t) => {
  const blocks = docBlocks(ROOT).filter((b) => b.file === 'docs/sdk.md' && b.lang === 'python');
  assert.equal(blocks.length, 1, 'one Python example in docs/sdk.md');
  const example = blocks[0]!.body;
  assert.ok(example.split('\n').length <= 14, 'about ten lines');
  const shop = await startSdkShop(t, pythonReceiver);
  const dir = mkdtempSync(join(tmpdir(), 'cg-py-doc-'));
  // The example as written, then a harness that hands it deliveries as a web framework would.
  writeFileSync(
    join(dir, 'shop.py'),
    `${example}\n\nimport json\nfor line in open("deliveries.jsonl", encoding="utf-8").read().splitlines():\n    d = json.loads(line)\n    try:\n        on_webhook(d["headers"], d["body"].encode())\n    except Exception as err:\n        print("refused", type(err).__name__, getattr(err, "reason", ""))\n`,
  );
  const completed = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8').match(/`payment\.completed`:\n\n```json\n([\s\S]*?)\n```/)![1]!;
  const event = JSON.parse(completed) as { data: { payment: Record<string, unknown> } };
  Object.assign(event.data.payment, { receivedAmount: '24.999999', received_amount: '24.999999', amount_difference: '-0.000001' });
  const raw = JSON.stringify(event);
  const now = Math.floor(Date.now() / 1000);
  const deliveries = [
    { headers: { 'X-Webhook-Signature': signWebhookPayload(shop.creds.apiSecret, now, raw) }, body: raw },
    { headers: { 'X-Webhook-Signature': signWebhookPayload(shop.creds.apiSecret, now, raw) }, body: raw.replace('24.999999', '25') },
  ];
  writeFileSync(join(dir, 'deliveries.jsonl'), deliveries.map((d) => JSON.stringify(d)).join('\n'));
  const run = await runProgram(PYTHON, ['shop.py'], { ...shop.scriptEnv, ...withSdk }, { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split('\n');
  const invoiceId = /\/i\/([a-z0-9]+)$/.exec(lines[0]!)?.[1];
  assert.ok(invoiceId, String(lines[0]));
  const invoice = await createChaingateClient({ baseUrl: shop.serve.url, apiKey: shop.creds.apiKey, apiSecret: shop.creds.apiSecret }).getInvoice(invoiceId);
  assert.deepEqual([invoice.orderId, invoice.amount, invoice.status], ['order-1042', '2500', 'OPEN']);
  assert.deepEqual(lines.slice(1), ['order order-1042 underpaid -0.000001', 'refused WebhookVerificationError mismatch']);
});

test('every Python block of the SDK docs compiles, and the package installs with pip from the repository', async (t) => {
  const blocks = docBlocks(ROOT).filter((b) => b.file.startsWith('docs/sdk') && b.lang === 'python');
  assert.ok(blocks.length >= 3);
  const dir = mkdtempSync(join(tmpdir(), 'cg-py-blocks-'));
  for (const [i, b] of blocks.entries()) writeFileSync(join(dir, `block_${i}.py`), b.body);
  const compiled = await runProgram(PYTHON, ['-m', 'py_compile', ...blocks.map((_, i) => join(dir, `block_${i}.py`))]);
  assert.equal(compiled.code, 0, compiled.stderr);

  const pyproject = readFileSync(join(PY, 'pyproject.toml'), 'utf8');
  const version = /^version = "([^"]+)"/m.exec(pyproject)?.[1];
  assert.match(pyproject, /^requires-python = ">=3\.9"$/m);
  assert.match(pyproject, /^dependencies = \[\]$/m, 'no runtime dependency');
  assert.equal(readFileSync(join(PY, 'src/chaingate/__init__.py'), 'utf8').match(/__version__ = "([^"]+)"/)?.[1], version);

  const pip = await runProgram(PYTHON, ['-c', 'import setuptools, wheel, pip']);
  if (pip.code !== 0) {
    t.skip('pip or setuptools is not installed for this python3 (Debian: python3-pip, which brings setuptools and wheel)');
    return;
  }
  // From a copy, so the build leaves nothing in the repository; offline, as a shop's build box may be.
  const copy = join(mkdtempSync(join(tmpdir(), 'cg-py-src-')), 'python');
  cpSync(PY, copy, { recursive: true });
  const target = mkdtempSync(join(tmpdir(), 'cg-py-site-'));
  const installed = await runProgram(PYTHON, ['-m', 'pip', 'install', '--quiet', '--no-build-isolation', '--no-deps', '--no-index', '--target', target, copy], { PIP_DISABLE_PIP_VERSION_CHECK: '1' }, { timeoutMs: 120_000 });
  assert.equal(installed.code, 0, installed.stderr);
  const imported = await runProgram(PYTHON, ['-c', 'import chaingate, os; print(chaingate.__version__, os.path.exists(os.path.join(os.path.dirname(chaingate.__file__), "py.typed")))'], { PYTHONPATH: target }, { cwd: tmpdir() });
  assert.equal(imported.stdout.trim(), `${version} True`, imported.stderr);
});
