import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createHttpApp } from './app.ts';

/** A daemon HTTP app whose logger writes JSON lines into `lines`, with a route that logs as told. */
async function appLogging(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level, redact: { paths: ['apiSecret'], censor: '[redacted]' } }, sink);
  const app = createHttpApp({ log, bodyLimit: 1024, trustProxy: false });
  app.get('/log', async (req) => {
    const q = req.query as { at?: string };
    for (const at of (q.at ?? '').split(',').filter(Boolean)) req.log[at as 'info'](`${at} line`);
    req.log.child({ step: 'inner' }).warn({ apiSecret: 's3cret' }, 'from a child');
    return { level: req.log.level };
  });
  await app.ready();
  return { app, lines };
}

test('req.log writes with the request id and the http component, at the enabled levels only', async () => {
  const { app, lines } = await appLogging('info');
  const res = await app.inject({ url: '/log?at=debug,info,error' });
  const id = res.headers['x-request-id'];
  assert.equal(res.json().level, 'info');
  const mine = lines.filter((l) => l.reqId === id);
  assert.deepEqual(
    mine.map((l) => l.msg),
    ['info line', 'error line', 'from a child', 'request'],
  );
  for (const l of mine) assert.equal(l.component, 'http');
  const child = mine.find((l) => l.msg === 'from a child')!;
  assert.equal(child.step, 'inner');
  assert.equal(child.apiSecret, '[redacted]');
  await app.close();
});

test('req.log at a level that writes nothing stays silent, and its level is the parent one', async () => {
  const { app, lines } = await appLogging('error');
  const res = await app.inject({ url: '/log?at=trace,debug,info,warn' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.json().level, 'error');
  assert.equal(lines.length, 0);
  const failing = await app.inject({ url: '/log?at=fatal' });
  assert.deepEqual(
    lines.map((l) => [l.msg, l.reqId]),
    [['fatal line', failing.headers['x-request-id']]],
  );
  await app.close();
});
