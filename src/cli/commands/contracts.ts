import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { ContractFactory, JsonRpcProvider, Network, Wallet } from 'ethers';
import { stringify } from 'yaml';
import { getNetwork} from '../../chains/registry.ts';
import { credentialedRequest } from '../../families/jsonrpc/rpc.ts';
import { CHAIN_SLUGS, isChainSlug } from '../../chains/slugs.ts';
import { InvalidAddressError } from '../../domain/errors.ts';
import { contractFamilies, familyLabels, hasPaymentContract, validateAddress, resolveChains } from '../../families/families.ts';
import { endpointUrls, loadConfig } from '../../config/load-config.ts';
import { UsageError } from '../../domain/errors.ts';
import { createLogger } from '../../logger.ts';
import { emit } from '../output.ts';

const ARTIFACT = fileURLToPath(new URL('../../../contracts/build/PaymentGateway.json', import.meta.url));

/** The deployer key, read from the environment for this command only; never stored or printed. */
function deployerKey(): string {
  const key = process.env.CHAINGATE_DEPLOYER_KEY?.trim();
  if (!key) throw new UsageError('set CHAINGATE_DEPLOYER_KEY to the hex private key of a funded deployer account (used for this command only, never stored)');
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(key)) throw new UsageError('CHAINGATE_DEPLOYER_KEY must be a 32-byte hex private key');
  return key.startsWith('0x') ? key : `0x${key}`;
}

export function contractsCommand(): Command {
  const cmd = new Command('contracts').description('the EVM payment contract used by the web3 and service_wallet methods');
  cmd
    .command('deploy')
    .description('deploy PaymentGateway (committed build) with the key in CHAINGATE_DEPLOYER_KEY and print the config lines to add')
    .requiredOption('--chain <slug>', 'EVM chain slug')
    .option('--testnet', "deploy on the chain's testnet")
    .requiredOption('--treasury <address>', 'where every payment goes (fixed at deployment; no admin can change it)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { chain: string; testnet?: boolean; treasury: string; json?: boolean }) => {
      if (!isChainSlug(opts.chain)) throw new UsageError(`unknown chain slug ${JSON.stringify(opts.chain)} (known: ${CHAIN_SLUGS.join(', ')})`);
      const { config } = loadConfig();
      const log = createLogger(config.log.level, { process: 'contracts' }, config.log.format, endpointUrls(config));
      const network = getNetwork(resolveChains(config.chains), opts.chain, Boolean(opts.testnet));
      const contracts = familyLabels(contractFamilies());
      if (!hasPaymentContract(network.family)) throw new UsageError(`${opts.chain} is not an ${contracts} chain: the payment contract exists on ${contracts} chains only`);
      let treasury: string;
      try {
        treasury = validateAddress(network.family, opts.treasury, network.testnet);
      } catch (err) {
        if (err instanceof InvalidAddressError) throw new UsageError(`--treasury: ${err.message}`);
        throw err;
      }
      const key = deployerKey();
      const artifact = JSON.parse(readFileSync(ARTIFACT, 'utf8')) as { abi: unknown[]; bytecode: string };
      const request = credentialedRequest(network.rpcUrl);
      request.timeout = 60_000;
      const chainNet = network.chainId ? Network.from(network.chainId) : undefined;
      const provider = new JsonRpcProvider(request, chainNet, { staticNetwork: chainNet, cacheTimeout: -1 });
      try {
        const remote = BigInt(await provider.send('eth_chainId', []));
        if (network.chainId !== null && remote !== BigInt(network.chainId)) {
          throw new UsageError(`RPC serves chain id ${remote}, but ${opts.chain} ${network.network} is ${network.chainId}: check chains.${opts.chain}.${opts.testnet ? 'testnet' : 'mainnet'}.rpcUrl`);
        }
        const signer = new Wallet(key, provider);
        log.info({ chain: opts.chain, network: network.network, deployer: signer.address }, 'deploying PaymentGateway');
        const contract = await new ContractFactory(artifact.abi as never, artifact.bytecode, signer).deploy(treasury);
        const receipt = await contract.deploymentTransaction()!.wait();
        const address = await contract.getAddress();
        const side = network.testnet ? 'testnet' : 'mainnet';
        const lines = stringify({ chains: { [opts.chain]: { [side]: { paymentContract: address, treasury } } } });
        const out = {
          chain: opts.chain,
          network: network.network,
          contractAddress: address,
          treasury,
          deployer: signer.address,
          transactionHash: receipt?.hash ?? null,
          blockNumber: receipt?.blockNumber ?? null,
          config: lines,
        };
        emit(opts.json, out, () => `PaymentGateway deployed on ${opts.chain} ${network.network} at ${address} (tx ${out.transactionHash}).\nAdd to your config file:\n\n${lines}`);
      } finally {
        provider.destroy();
      }
    });
  return cmd;
}
