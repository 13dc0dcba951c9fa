import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prettyLine } from './logger.ts';

const at = new Date(2026, 2, 14, 9, 5, 7).getTime();

test('prettyLine: HH:MM:SS LEVEL message key=value, without pid, process or time fields', () => {
  const line = JSON.stringify({ level: 40, time: at, pid: 1, process: 'serve', chain: 'ethereum', free: 1, chains: ['a', 'b'], note: 'two words', msg: 'wallet pool is running low' });
  assert.equal(prettyLine(line), '09:05:07 WARN  wallet pool is running low chain=ethereum free=1 chains=a,b note="two words"\n');
});

test("prettyLine: an error's message on the line, its stack below it from level error up", () => {
  const err = { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.ts:1:1)' };
  assert.equal(prettyLine(JSON.stringify({ level: 40, time: at, err, msg: 'retrying' })), '09:05:07 WARN  retrying err=boom\n');
  assert.equal(prettyLine(JSON.stringify({ level: 50, time: at, err, msg: 'failed' })), '09:05:07 ERROR failed err=boom\n    Error: boom\n    at f (x.ts:1:1)\n');
});

test('prettyLine: colours the level only when asked; a line that is not JSON passes through', () => {
  assert.equal(prettyLine(JSON.stringify({ level: 30, time: at, msg: 'hi' }), true), '09:05:07 \u001b[32mINFO \u001b[0m hi\n');
  assert.equal(prettyLine('not json'), 'not json\n');
});

test("prettyLine: the offer summary's machine fields are not repeated after its message", () => {
  assert.equal(prettyLine(JSON.stringify({ level: 40, time: at, offered: [], notOffered: ['bitcoin:MAINNET'], msg: 'offered to buyers: nothing; not offered: bitcoin (no indexer)' })), '09:05:07 WARN  offered to buyers: nothing; not offered: bitcoin (no indexer)\n');
});
