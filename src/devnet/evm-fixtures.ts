/**
 * EVM test fixtures: deploy the prebuilt contracts from contracts/build/ (see
 * scripts/build-contracts.ts) onto a Hardhat node started with
 * test/helpers/hardhat-node.ts.
 *
 * ---------------------------------------------------------------------------
 * Tracing on Hardhat 3 (for trace-based native deposit detection)
 * ---------------------------------------------------------------------------
 * Hardhat 3.18 (EDR) does NOT implement `debug_traceBlockByNumber` (nor
 * `debug_traceBlockByHash`, `trace_block`, `trace_transaction`): it answers
 *   { "code": -32004, "message": "Method debug_traceBlockByNumber is not supported" }
 * It DOES implement `debug_traceTransaction` and `debug_traceCall` with
 * `{ tracer: "callTracer" }`. `traceBlockByNumber()` in hardhat-node.ts
 * therefore falls back to eth_getBlockByNumber + debug_traceTransaction per tx
 * and returns the geth `debug_traceBlockByNumber` shape.
 *
 * Observed `debug_traceTransaction(hash, { tracer: "callTracer" })` on
 * Hardhat 3.18 for a native `PaymentGateway.pay(id("invoice-1"), address(0),
 * 1 ETH)` from the fixture payer (fresh node + deployFixtures). The helper
 * wraps each one as `{ txHash, result }`, i.e. exactly geth's
 * `debug_traceBlockByNumber` element shape:
 *
 *   [
 *     {
 *       "txHash": "0x08ef9e1b005a7a9e2daef7042375ad8e1410a2522b47d8f9bd2c3459724a3c12",
 *       "result": {
 *         "from": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",      // payer (EOA)
 *         "gas": "0xef85",
 *         "gasUsed": "0xe684",
 *         "to": "0xdc64a140aa3e981100a9beca4e685f962f0cf6c9",        // gateway
 *         "input": "0x97d4df67<externalId><token = 0><amount>",       // pay(bytes32,address,uint256)
 *         "calls": [
 *           {
 *             "from": "0xdc64a140aa3e981100a9beca4e685f962f0cf6c9",  // gateway
 *             "gas": "0x95e",
 *             "gasUsed": "0x0",
 *             "to": "0xffc51edc9a162de46575f4a5275ec3c5300d8904",    // treasury
 *             "input": "0x",
 *             "value": "0xde0b6b3a7640000",                          // 1 ETH: the internal native transfer
 *             "type": "CALL"
 *           }
 *         ],
 *         "value": "0xde0b6b3a7640000",
 *         "type": "CALL"
 *       }
 *     }
 *   ]
 *
 * Shape notes: addresses are lowercase hex; gas/gasUsed/value are hex
 * quantities; key order is from, gas, gasUsed, to, input, [output], [error],
 * [calls], value, type; `output` is omitted when empty on success; `calls` is
 * omitted for leaf frames; STATICCALL/DELEGATECALL frames have no `value`.
 * A failed frame looks like this (debug_traceCall of an ERC-20 pay without
 * approval; note: custom errors give NO `revertReason`, only `error` + `output`):
 *
 *   { "from": "<payer>", "gas": "0x1000000", "gasUsed": "0x7c78", "to": "<gateway>",
 *     "input": "0x97d4df67...", "output": "0xf9466b44...",           // TokenTransferFailed(token, data)
 *     "error": "execution reverted",
 *     "calls": [ { "from": "<gateway>", "gas": "0xfb93da", "gasUsed": "0xb74", "to": "<token>",
 *                  "input": "0x23b872dd...", "output": "0x192b9e4e...", // InsufficientAllowance(...)
 *                  "error": "execution reverted", "value": "0x0", "type": "CALL" } ],
 *     "value": "0x0", "type": "CALL" }
 *
 * A deposit detector must ignore frames that have `error` set or sit under a
 * frame that has (a reverted subtree moved no value). Logs are not included
 * (callTracer `withLog` not requested).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Contract, ContractFactory, Wallet, keccak256, parseUnits, toUtf8Bytes } from "ethers";
import type { InterfaceAbi, Signer } from "ethers";
import type { HardhatNode } from "./hardhat-node.ts";

const BUILD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "contracts", "build");

/** Shape of contracts/build/<ContractName>.json written by scripts/build-contracts.ts. */
export interface ContractBuildArtifact {
  contractName: string;
  sourceName: string;
  abi: InterfaceAbi;
  bytecode: string;
  deployedBytecode: string;
  compilerVersion: string;
  evmVersion: string;
  optimizer: { enabled: boolean; runs: number };
}

/** Reads contracts/build/<name>.json. */
export function loadArtifact(name: string): ContractBuildArtifact {
  const file = path.join(BUILD_DIR, `${name}.json`);
  return JSON.parse(readFileSync(file, "utf8")) as ContractBuildArtifact;
}

/** Deploys contracts/build/<name>.json from `signer` and waits for the receipt. */
export async function deployContract(signer: Signer, name: string, args: readonly unknown[] = []): Promise<Contract> {
  const artifact = loadArtifact(name);
  const factory = new ContractFactory(artifact.abi, artifact.bytecode, signer);
  const deployed = await factory.deploy(...args);
  await deployed.waitForDeployment();
  return new Contract(await deployed.getAddress(), artifact.abi, signer);
}

/** Units of each token minted to the payer by deployFixtures (1 000 000 tokens). */
export const FIXTURE_MINT_TOKENS = "1000000";

export interface EvmFixtures {
  /** Hardhat account #0: deploys everything. */
  deployer: Wallet;
  /** Hardhat account #1: holds the minted tokens (and 10 000 ETH). */
  payer: Wallet;
  /** Hardhat account #2: unrelated funded account (no tokens). */
  other: Wallet;
  /** Fresh, deterministic, unfunded account (balance 0): the gateway's treasury. */
  treasury: Wallet;
  /** PaymentGateway(treasury). */
  gateway: Contract;
  /** TestToken "USD Coin"/"USDC", 6 decimals (standard ERC-20). */
  usdc: Contract;
  /** NoBoolToken "Tether USD"/"USDT", 6 decimals (transfer/transferFrom return nothing). */
  usdt: Contract;
  /** Look-alike TestToken "USD Coin"/"USDC", 6 decimals, at a different address. */
  fakeUsdc: Contract;
  /** FalseReturnToken "False Token"/"FALSE", 18 decimals (returns false instead of reverting). */
  falseToken: Contract;
  addresses: {
    deployer: string;
    payer: string;
    other: string;
    treasury: string;
    gateway: string;
    usdc: string;
    usdt: string;
    fakeUsdc: string;
    falseToken: string;
  };
  /** Amount (smallest units) of each token minted to `payer`. */
  minted: { usdc: bigint; usdt: bigint; fakeUsdc: bigint; falseToken: bigint };
}

/**
 * Deploys USDC (TestToken, 6 dp), USDT (NoBoolToken, 6 dp), a look-alike
 * USDC (TestToken, 6 dp, different address), a FalseReturnToken and
 * PaymentGateway(treasury) where treasury is a fresh unfunded account distinct
 * from the payer, then mints FIXTURE_MINT_TOKENS of every token to the payer.
 *
 * On a fresh node the addresses are deterministic (deployer nonce 0..4).
 */
export async function deployFixtures(node: HardhatNode): Promise<EvmFixtures> {
  const [deployer, payer, other] = node.accounts;
  if (deployer === undefined || payer === undefined || other === undefined) {
    throw new Error("hardhat node must expose at least 3 accounts");
  }
  const treasury = new Wallet(keccak256(toUtf8Bytes("chaingate:test:treasury")), node.provider);

  const usdc = await deployContract(deployer, "TestToken", ["USD Coin", "USDC", 6]);
  const usdt = await deployContract(deployer, "NoBoolToken", ["Tether USD", "USDT"]);
  const fakeUsdc = await deployContract(deployer, "TestToken", ["USD Coin", "USDC", 6]);
  const falseToken = await deployContract(deployer, "FalseReturnToken", ["False Token", "FALSE", 18]);
  const gateway = await deployContract(deployer, "PaymentGateway", [treasury.address]);

  const minted = {
    usdc: parseUnits(FIXTURE_MINT_TOKENS, 6),
    usdt: parseUnits(FIXTURE_MINT_TOKENS, 6),
    fakeUsdc: parseUnits(FIXTURE_MINT_TOKENS, 6),
    falseToken: parseUnits(FIXTURE_MINT_TOKENS, 18),
  };
  await (await usdc.getFunction("mint")(payer.address, minted.usdc)).wait();
  await (await usdt.getFunction("mint")(payer.address, minted.usdt)).wait();
  await (await fakeUsdc.getFunction("mint")(payer.address, minted.fakeUsdc)).wait();
  await (await falseToken.getFunction("mint")(payer.address, minted.falseToken)).wait();

  return {
    deployer,
    payer,
    other,
    treasury,
    gateway,
    usdc,
    usdt,
    fakeUsdc,
    falseToken,
    addresses: {
      deployer: deployer.address,
      payer: payer.address,
      other: other.address,
      treasury: treasury.address,
      gateway: await gateway.getAddress(),
      usdc: await usdc.getAddress(),
      usdt: await usdt.getAddress(),
      fakeUsdc: await fakeUsdc.getAddress(),
      falseToken: await falseToken.getAddress(),
    },
    minted,
  };
}
