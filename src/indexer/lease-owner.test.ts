import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { leaseOwnerId, ownerIsGone } from './lease-owner.ts';

test('a lease owner names its pid, boot and pid namespace, within the 64-character column', () => {
  const owner = leaseOwnerId();
  assert.ok(owner.length <= 64, owner);
  assert.match(owner, new RegExp(`^${process.pid}-[0-9a-f]{8}@[0-9a-f]{32}\\.\\d+$`));
  assert.notEqual(leaseOwnerId(), owner, 'two indexers of one process are two owners');
});

test('only an owner of this machine whose process has exited is gone', async () => {
  const owner = leaseOwnerId();
  assert.equal(ownerIsGone(owner), false, 'this process runs');
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  const childOwner = owner.replace(/^\d+/, String(child.pid));
  assert.equal(ownerIsGone(childOwner), false, 'a live process');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.equal(ownerIsGone(childOwner), true, 'killed');
  // Elsewhere, or in a format without a place: never judged gone, the lease is waited out.
  assert.equal(ownerIsGone(childOwner.replace(/@[0-9a-f]{32}/, `@${'0'.repeat(32)}`)), false, 'another boot');
  assert.equal(ownerIsGone(childOwner.replace(/\.\d+$/, '.1')), false, 'another pid namespace');
  assert.equal(ownerIsGone(`${child.pid}-abcdef01`), false, 'the older format');
  assert.equal(ownerIsGone('not an owner'), false);
});
