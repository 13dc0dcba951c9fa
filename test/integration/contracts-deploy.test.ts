import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Contract } from 'ethers';
import { runCli } from '../helpers/cli.ts';
import { loadArtifact } from '../../src/devnet/evm-fixtures.ts';
import { startHardhatNode } from '../../src/devnet/hardhat-node.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';

test('contracts deploy puts PaymentGateway on chain with the env key and prints the config lines', async (t) => {
  const node = await startHardhatNode({ chainId: 1 });
  t.after(() => node.stop());
  const key = node.privateKeys[0]!;
  const treasury = node.accounts[5]!.address;
  const env = { CHAINGATE_CONFIG: writeConfigFile({ chains: { ethereum: { mainnet: { rpcUrl: node.url } } } }), CHAINGATE_DEPLOYER_KEY: key };

  const res = await runCli(['contracts', 'deploy', '--chain', 'ethereum', '--treasury', treasury, '--json'], env);
  assert.equal(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout) as { contractAddress: string; treasury: string; config: string; network: string };
  assert.equal(out.network, 'MAINNET');
  assert.equal(out.treasury, treasury);
  assert.match(out.config, new RegExp(`paymentContract: "?${out.contractAddress}"?`));
  const gateway = new Contract(out.contractAddress, loadArtifact('PaymentGateway').abi, node.provider);
  assert.equal(await gateway.getFunction('treasury')(), treasury);
  const bare = key.replace(/^0x/, '');
  assert.ok(!res.stdout.includes(bare) && !res.stderr.includes(bare), 'the deployer key is never printed or logged');

  const human = await runCli(['contracts', 'deploy', '--chain', 'ethereum', '--treasury', treasury], env);
  assert.match(human.stdout, /Add to your config file:\s+chains:\s+ethereum:\s+mainnet:\s+paymentContract: /);

  const noKey = await runCli(['contracts', 'deploy', '--chain', 'ethereum', '--treasury', treasury], { CHAINGATE_CONFIG: env.CHAINGATE_CONFIG });
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /set CHAINGATE_DEPLOYER_KEY/);
  const tron = await runCli(['contracts', 'deploy', '--chain', 'tron', '--treasury', treasury], env);
  assert.equal(tron.code, 2);
  assert.match(tron.stderr, /not an EVM chain/);
  const badTreasury = await runCli(['contracts', 'deploy', '--chain', 'ethereum', '--treasury', '0x1234'], env);
  assert.equal(badTreasury.code, 2);
  assert.match(badTreasury.stderr, /--treasury/);
  const wrongChain = await runCli(['contracts', 'deploy', '--chain', 'base', '--treasury', treasury], {
    ...env,
    CHAINGATE_CONFIG: writeConfigFile({ chains: { base: { mainnet: { rpcUrl: node.url } } } }),
  });
  assert.equal(wrongChain.code, 2);
  assert.match(wrongChain.stderr, /serves chain id 1, but base MAINNET is 8453/);
});
