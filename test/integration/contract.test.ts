/**
 * PaymentGateway against a real Hardhat 3 node (prebuilt artifacts from
 * contracts/build/). One node for the whole file; every test runs between an
 * evm_snapshot / evm_revert pair so tests do not see each other's state.
 */
import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";
import {
  AbiCoder,
  type Contract,
  Interface,
  ZeroAddress,
  getAddress,
  id,
  parseEther,
  parseUnits,
  toBeHex,
  zeroPadValue,
} from "ethers";
import type { Log, TransactionReceipt } from "ethers";
import { deployContract, deployFixtures, loadArtifact } from "../../src/devnet/evm-fixtures.ts";
import type { EvmFixtures } from "../../src/devnet/evm-fixtures.ts";
import { flattenCallTrace, startHardhatNode, traceBlockByNumber } from "../../src/devnet/hardhat-node.ts";
import type { HardhatNode } from "../../src/devnet/hardhat-node.ts";

const PAYMENT_RECEIVED_SIGNATURE = "PaymentReceived(bytes32,address,address,uint256)";
/** The event as an indexer would declare it (human-readable ABI, independent of the artifact). */
const HUMAN_READABLE_EVENT =
  "event PaymentReceived(bytes32 indexed externalId, address indexed payer, address indexed token, uint256 amount)";

let node: HardhatNode;
let fx: EvmFixtures;
let snapshotId: string;

/** Fails unless `promise` rejects with custom error `errorName` of `iface`; returns the decoded args. */
async function expectCustomError(
  promise: Promise<unknown>,
  iface: Interface,
  errorName: string,
): Promise<readonly unknown[]> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `expected revert with ${errorName}, but the call succeeded`);
  const data = (caught as { data?: unknown }).data;
  assert.equal(typeof data, "string", `revert carries no data: ${String(caught)}`);
  const parsed = iface.parseError(data as string);
  assert.ok(parsed !== null, `unknown revert data ${String(data)}`);
  assert.equal(parsed.name, errorName);
  return [...parsed.args];
}

function paymentLogs(receipt: TransactionReceipt, gatewayAddress: string): Log[] {
  const topic = id(PAYMENT_RECEIVED_SIGNATURE);
  return receipt.logs.filter((l) => l.address === gatewayAddress && l.topics[0] === topic);
}

function fn(contract: Contract, name: string) {
  return contract.getFunction(name);
}

describe("PaymentGateway (hardhat node)", () => {
  before(async () => {
    const t0 = performance.now();
    node = await startHardhatNode();
    const started = performance.now();
    fx = await deployFixtures(node);
    console.log(
      `hardhat node ${node.url} (pid ${node.pid}) ready in ${Math.round(started - t0)} ms, ` +
        `fixtures deployed in ${Math.round(performance.now() - started)} ms`,
    );
  });

  after(async () => {
    await node?.stop();
  });

  beforeEach(async () => {
    snapshotId = await node.snapshot();
  });

  afterEach(async () => {
    await node.revert(snapshotId);
  });

  test("node basics: chain id, automine on, mine() and snapshot/revert", async () => {
    assert.equal(node.chainId, 31337);
    assert.equal((await node.provider.getNetwork()).chainId, 31337n);
    assert.equal(await node.send<boolean>("hardhat_getAutomine"), true);

    const start = await node.provider.getBlockNumber();
    await node.mine(5);
    assert.equal(await node.provider.getBlockNumber(), start + 5);

    const snap = await node.snapshot();
    await node.mine(3);
    await node.revert(snap);
    assert.equal(await node.provider.getBlockNumber(), start + 5);
    await assert.rejects(node.revert(snap), /returned false/); // snapshots are single-use
  });

  test("gateway exposes no function other than pay() and treasury()", () => {
    const iface = fx.gateway.interface;
    const names: string[] = [];
    iface.forEachFunction((f) => names.push(f.format("sighash")));
    assert.deepEqual(names.sort(), ["pay(bytes32,address,uint256)", "treasury()"]);
    assert.equal(iface.fallback, null, "no receive/fallback");
  });

  test("treasury is immutable, set, and distinct from the payer", async () => {
    assert.equal(await fn(fx.gateway, "treasury")(), fx.addresses.treasury);
    assert.notEqual(fx.addresses.treasury, fx.addresses.payer);
    assert.equal(await node.provider.getBalance(fx.addresses.treasury), 0n);
  });

  test("native pay forwards exactly msg.value to the treasury and emits PaymentReceived", async () => {
    const amount = parseEther("1.2345");
    const externalId = id("invoice-native-1");
    const gw = fx.gateway.connect(fx.payer) as Contract;

    const treasuryBefore = await node.provider.getBalance(fx.addresses.treasury);
    const payerBefore = await node.provider.getBalance(fx.addresses.payer);

    const tx = await fn(gw, "pay")(externalId, ZeroAddress, amount, { value: amount });
    const receipt = (await tx.wait()) as TransactionReceipt;
    assert.equal(receipt.status, 1);

    assert.equal(await node.provider.getBalance(fx.addresses.treasury), treasuryBefore + amount);
    assert.equal(await node.provider.getBalance(fx.addresses.gateway), 0n);
    assert.equal(await node.provider.getBalance(fx.addresses.payer), payerBefore - amount - receipt.fee);

    const logs = paymentLogs(receipt, fx.addresses.gateway);
    assert.equal(logs.length, 1);
    const parsed = fx.gateway.interface.parseLog(logs[0] as Log);
    assert.ok(parsed !== null);
    assert.equal(parsed.name, "PaymentReceived");
    assert.equal(parsed.args.getValue("externalId"), externalId);
    assert.equal(parsed.args.getValue("payer"), fx.addresses.payer);
    assert.equal(parsed.args.getValue("token"), ZeroAddress);
    assert.equal(parsed.args.getValue("amount"), amount);
  });

  test("ERC-20 pay (standard token) moves tokens payer -> treasury after approve", async () => {
    const amount = parseUnits("250.5", 6);
    const externalId = id("invoice-usdc-1");
    const usdc = fx.usdc.connect(fx.payer) as Contract;
    const gw = fx.gateway.connect(fx.payer) as Contract;

    await (await fn(usdc, "approve")(fx.addresses.gateway, amount)).wait();
    const receipt = (await (await fn(gw, "pay")(externalId, fx.addresses.usdc, amount)).wait()) as TransactionReceipt;

    assert.equal(await fn(usdc, "balanceOf")(fx.addresses.treasury), amount);
    assert.equal(await fn(usdc, "balanceOf")(fx.addresses.payer), fx.minted.usdc - amount);
    assert.equal(await fn(usdc, "balanceOf")(fx.addresses.gateway), 0n);
    assert.equal(await fn(usdc, "allowance")(fx.addresses.payer, fx.addresses.gateway), 0n);
    assert.equal(await node.provider.getBalance(fx.addresses.gateway), 0n);

    const logs = paymentLogs(receipt, fx.addresses.gateway);
    assert.equal(logs.length, 1);
    const parsed = fx.gateway.interface.parseLog(logs[0] as Log);
    assert.ok(parsed !== null);
    assert.deepEqual(
      [parsed.args.getValue("externalId"), parsed.args.getValue("payer"), parsed.args.getValue("token"), parsed.args.getValue("amount")],
      [externalId, fx.addresses.payer, fx.addresses.usdc, amount],
    );
    // The token's own Transfer event goes payer -> treasury directly (never via the gateway).
    const transferTopic = id("Transfer(address,address,uint256)");
    const transfers = receipt.logs.filter((l) => l.address === fx.addresses.usdc && l.topics[0] === transferTopic);
    assert.equal(transfers.length, 1);
    assert.equal(getAddress(`0x${transfers[0]?.topics[1]?.slice(26)}`), fx.addresses.payer);
    assert.equal(getAddress(`0x${transfers[0]?.topics[2]?.slice(26)}`), fx.addresses.treasury);
  });

  test("ERC-20 pay with a USDT-style token that returns no bool", async () => {
    const amount = parseUnits("99.999999", 6);
    const externalId = id("invoice-usdt-1");
    const usdt = fx.usdt.connect(fx.payer) as Contract;
    const gw = fx.gateway.connect(fx.payer) as Contract;
    assert.equal(await fn(usdt, "decimals")(), 6n);

    await (await fn(usdt, "approve")(fx.addresses.gateway, amount)).wait();
    const receipt = (await (await fn(gw, "pay")(externalId, fx.addresses.usdt, amount)).wait()) as TransactionReceipt;

    assert.equal(await fn(usdt, "balanceOf")(fx.addresses.treasury), amount);
    assert.equal(await fn(usdt, "balanceOf")(fx.addresses.payer), fx.minted.usdt - amount);
    assert.equal(await fn(usdt, "balanceOf")(fx.addresses.gateway), 0n);
    const parsed = fx.gateway.interface.parseLog(paymentLogs(receipt, fx.addresses.gateway)[0] as Log);
    assert.equal(parsed?.args.getValue("token"), fx.addresses.usdt);
    assert.equal(parsed?.args.getValue("amount"), amount);
  });

  test("look-alike token: same symbol/decimals, different address, reported as its own address", async () => {
    assert.equal(await fn(fx.fakeUsdc, "symbol")(), await fn(fx.usdc, "symbol")());
    assert.equal(await fn(fx.fakeUsdc, "decimals")(), await fn(fx.usdc, "decimals")());
    assert.notEqual(fx.addresses.fakeUsdc, fx.addresses.usdc);

    const amount = parseUnits("10", 6);
    const fake = fx.fakeUsdc.connect(fx.payer) as Contract;
    await (await fn(fake, "approve")(fx.addresses.gateway, amount)).wait();
    const gw = fx.gateway.connect(fx.payer) as Contract;
    const receipt = (await (await fn(gw, "pay")(id("invoice-fake"), fx.addresses.fakeUsdc, amount)).wait()) as TransactionReceipt;
    const parsed = fx.gateway.interface.parseLog(paymentLogs(receipt, fx.addresses.gateway)[0] as Log);
    assert.equal(parsed?.args.getValue("token"), fx.addresses.fakeUsdc);
    assert.equal(await fn(fx.usdc, "balanceOf")(fx.addresses.treasury), 0n);
  });

  test("PaymentReceived topic and ABI match what ethers (and a human-readable ABI) decode", async () => {
    const amount = 12_345n;
    const externalId = id("invoice-topic");
    const gw = fx.gateway.connect(fx.payer) as Contract;
    const receipt = (await (await fn(gw, "pay")(externalId, ZeroAddress, amount, { value: amount })).wait()) as TransactionReceipt;
    const log = paymentLogs(receipt, fx.addresses.gateway)[0];
    assert.ok(log !== undefined);

    const topic0 = id(PAYMENT_RECEIVED_SIGNATURE);
    assert.equal(fx.gateway.interface.getEvent("PaymentReceived")?.topicHash, topic0);
    // Raw layout: 3 indexed args in topics[1..3], amount as the only data word.
    assert.deepEqual(
      [...log.topics],
      [topic0, externalId, zeroPadValue(fx.addresses.payer, 32).toLowerCase(), zeroPadValue(ZeroAddress, 32)],
    );
    assert.equal(log.data, AbiCoder.defaultAbiCoder().encode(["uint256"], [amount]));
    assert.equal(log.data, zeroPadValue(toBeHex(amount), 32));

    const human = new Interface([HUMAN_READABLE_EVENT]);
    assert.equal(human.getEvent("PaymentReceived")?.topicHash, topic0);
    const a = fx.gateway.interface.parseLog(log);
    const b = human.parseLog(log);
    assert.ok(a !== null && b !== null);
    assert.deepEqual([...b.args], [...a.args]);
    assert.deepEqual([...b.args], [externalId, fx.addresses.payer, ZeroAddress, amount]);

    // eth_getLogs filtered by topic0 + indexed externalId finds it.
    const found = await node.provider.getLogs({
      address: fx.addresses.gateway,
      topics: [topic0, externalId],
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
    });
    assert.equal(found.length, 1);
    assert.equal(found[0]?.transactionHash, receipt.hash);
  });

  describe("reverts", () => {
    test("native: msg.value different from amount", async () => {
      const gw = fx.gateway.connect(fx.payer) as Contract;
      const amount = parseEther("1");
      const args = await expectCustomError(
        fn(gw, "pay")(id("x"), ZeroAddress, amount, { value: amount - 1n }),
        fx.gateway.interface,
        "IncorrectNativeValue",
      );
      assert.deepEqual(args, [amount, amount - 1n]);
      await expectCustomError(
        fn(gw, "pay")(id("x"), ZeroAddress, amount, { value: amount + 1n }),
        fx.gateway.interface,
        "IncorrectNativeValue",
      );
      await expectCustomError(fn(gw, "pay")(id("x"), ZeroAddress, amount), fx.gateway.interface, "IncorrectNativeValue");
    });

    test("a mined reverting tx moves nothing and emits nothing", async () => {
      const gw = fx.gateway.connect(fx.payer) as Contract;
      const treasuryBefore = await node.provider.getBalance(fx.addresses.treasury);
      const blockBefore = await node.provider.getBlockNumber();
      // Explicit gasLimit skips estimateGas, so the failing tx is actually sent.
      // Hardhat quirk: with automine, eth_sendRawTransaction of a tx that
      // reverts returns a JSON-RPC error (code 3, revert data attached) even
      // though the tx IS mined (status 0) - real nodes return the hash.
      const sent = fn(gw, "pay")(id("x"), ZeroAddress, 10n, { value: 9n, gasLimit: 100_000n });
      const sendErr = await sent.then(
        () => assert.fail("expected eth_sendRawTransaction to fail on Hardhat"),
        (err: unknown) => err as { error?: { code?: number; data?: string } },
      );
      assert.equal(sendErr.error?.code, 3);
      assert.equal(fx.gateway.interface.parseError(sendErr.error?.data ?? "0x")?.name, "IncorrectNativeValue");

      assert.equal(await node.provider.getBlockNumber(), blockBefore + 1);
      const block = await node.provider.getBlock(blockBefore + 1);
      assert.equal(block?.transactions.length, 1);
      const receipt = await node.provider.getTransactionReceipt(block?.transactions[0] ?? "");
      assert.equal(receipt?.status, 0);
      assert.equal(receipt?.logs.length, 0);
      assert.equal(await node.provider.getBalance(fx.addresses.treasury), treasuryBefore);
      assert.equal(await node.provider.getBalance(fx.addresses.gateway), 0n);
    });

    test("amount 0 (native and token)", async () => {
      const gw = fx.gateway.connect(fx.payer) as Contract;
      await expectCustomError(fn(gw, "pay")(id("x"), ZeroAddress, 0n), fx.gateway.interface, "ZeroAmount");
      await expectCustomError(fn(gw, "pay")(id("x"), fx.addresses.usdc, 0n), fx.gateway.interface, "ZeroAmount");
    });

    test("ERC-20 without approval / with insufficient balance", async () => {
      const gw = fx.gateway.connect(fx.payer) as Contract;
      const amount = parseUnits("5", 6);

      // No approval: the token's revert data is wrapped in TokenTransferFailed.
      let [token, inner] = await expectCustomError(
        fn(gw, "pay")(id("x"), fx.addresses.usdc, amount),
        fx.gateway.interface,
        "TokenTransferFailed",
      );
      assert.equal(token, fx.addresses.usdc);
      assert.equal(fx.usdc.interface.parseError(inner as string)?.name, "InsufficientAllowance");

      // Approved but balance too low (`other` holds no USDC).
      const otherGw = fx.gateway.connect(fx.other) as Contract;
      await (await fn(fx.usdc.connect(fx.other) as Contract, "approve")(fx.addresses.gateway, amount)).wait();
      [token, inner] = await expectCustomError(
        fn(otherGw, "pay")(id("x"), fx.addresses.usdc, amount),
        fx.gateway.interface,
        "TokenTransferFailed",
      );
      assert.equal(fx.usdc.interface.parseError(inner as string)?.name, "InsufficientBalance");

      // USDT-style token without approval (reverts with a string reason).
      [token, inner] = await expectCustomError(
        fn(gw, "pay")(id("x"), fx.addresses.usdt, amount),
        fx.gateway.interface,
        "TokenTransferFailed",
      );
      assert.equal(token, fx.addresses.usdt);
      assert.deepEqual([...(new Interface([]).parseError(inner as string)?.args ?? [])], ["NoBoolToken: allowance"]);

      // Approval smaller than amount.
      await (await fn(fx.usdc.connect(fx.payer) as Contract, "approve")(fx.addresses.gateway, amount - 1n)).wait();
      await expectCustomError(fn(gw, "pay")(id("x"), fx.addresses.usdc, amount), fx.gateway.interface, "TokenTransferFailed");

      assert.equal(await fn(fx.usdc, "balanceOf")(fx.addresses.treasury), 0n);
    });

    test("ERC-20 that returns false instead of reverting", async () => {
      const gw = fx.gateway.connect(fx.payer) as Contract;
      const amount = parseUnits("1", 18);
      // No approval -> the token returns false.
      const [token, ret] = await expectCustomError(
        fn(gw, "pay")(id("x"), fx.addresses.falseToken, amount),
        fx.gateway.interface,
        "TokenTransferFailed",
      );
      assert.equal(token, fx.addresses.falseToken);
      assert.equal(ret, AbiCoder.defaultAbiCoder().encode(["bool"], [false]));

      // With approval it succeeds (returns true).
      await (await fn(fx.falseToken.connect(fx.payer) as Contract, "approve")(fx.addresses.gateway, amount)).wait();
      await (await fn(gw, "pay")(id("x"), fx.addresses.falseToken, amount)).wait();
      assert.equal(await fn(fx.falseToken, "balanceOf")(fx.addresses.treasury), amount);
    });

    test("token address without code", async () => {
      const gw = fx.gateway.connect(fx.payer) as Contract;
      for (const noCode of [fx.addresses.other, "0x000000000000000000000000000000000000dEaD"]) {
        const [token] = await expectCustomError(fn(gw, "pay")(id("x"), noCode, 1n), fx.gateway.interface, "TokenHasNoCode");
        assert.equal(token, getAddress(noCode));
      }
    });

    test("msg.value together with a token", async () => {
      const gw = fx.gateway.connect(fx.payer) as Contract;
      const amount = parseUnits("1", 6);
      await (await fn(fx.usdc.connect(fx.payer) as Contract, "approve")(fx.addresses.gateway, amount)).wait();
      const [value] = await expectCustomError(
        fn(gw, "pay")(id("x"), fx.addresses.usdc, amount, { value: 1n }),
        fx.gateway.interface,
        "UnexpectedNativeValue",
      );
      assert.equal(value, 1n);
    });

    test("plain ETH transfers to the gateway are rejected (no receive/fallback)", async () => {
      await assert.rejects(fx.payer.sendTransaction({ to: fx.addresses.gateway, value: 1n }));
      assert.equal(await node.provider.getBalance(fx.addresses.gateway), 0n);
    });

    test("constructor rejects a zero treasury", async () => {
      const iface = new Interface(loadArtifact("PaymentGateway").abi);
      await expectCustomError(deployContract(fx.deployer, "PaymentGateway", [ZeroAddress]), iface, "ZeroTreasury");
    });

    test("treasury that cannot receive native coin -> NativeTransferFailed", async () => {
      // A token contract has no receive/fallback, so the forward fails.
      const gw = await deployContract(fx.deployer, "PaymentGateway", [fx.addresses.usdc]);
      await expectCustomError(
        fn(gw.connect(fx.payer) as Contract, "pay")(id("x"), ZeroAddress, 1n, { value: 1n }),
        gw.interface,
        "NativeTransferFailed",
      );
    });
  });

  describe("tracing (for trace-based native deposit detection)", () => {
    test("Hardhat 3 does not implement debug_traceBlockByNumber", async () => {
      await assert.rejects(
        node.send("debug_traceBlockByNumber", ["latest", { tracer: "callTracer" }]),
        /not supported/,
      );
    });

    test("traceBlockByNumber exposes the internal native transfer gateway -> treasury", async () => {
      const amount = parseEther("1");
      const gw = fx.gateway.connect(fx.payer) as Contract;
      const receipt = (await (await fn(gw, "pay")(id("invoice-trace"), ZeroAddress, amount, { value: amount })).wait()) as TransactionReceipt;

      const { traces, usedFallback } = await traceBlockByNumber(node.provider, receipt.blockNumber);
      assert.equal(usedFallback, true);
      assert.equal(traces.length, 1);
      const trace = traces[0];
      assert.ok(trace !== undefined);
      assert.equal(trace.txHash, receipt.hash);

      const root = trace.result;
      assert.equal(root.type, "CALL");
      assert.equal(root.from, fx.addresses.payer.toLowerCase());
      assert.equal(root.to, fx.addresses.gateway.toLowerCase());
      assert.equal(BigInt(root.value ?? "0x0"), amount);
      assert.equal(root.error, undefined);

      const internal = flattenCallTrace(root).slice(1).filter((f) => BigInt(f.value ?? "0x0") > 0n);
      assert.equal(internal.length, 1);
      assert.equal(internal[0]?.type, "CALL");
      assert.equal(internal[0]?.from, fx.addresses.gateway.toLowerCase());
      assert.equal(internal[0]?.to, fx.addresses.treasury.toLowerCase());
      assert.equal(BigInt(internal[0]?.value ?? "0x0"), amount);
      assert.equal(internal[0]?.input, "0x");
    });

    test("several txs in one block (automine off) are traced in block order", async () => {
      await node.setAutomine(false);
      try {
        const gw = fx.gateway.connect(fx.payer) as Contract;
        const gasLimit = 100_000n; // no estimateGas against the pending state
        const tx1 = await fn(gw, "pay")(id("a"), ZeroAddress, 1n, { value: 1n, gasLimit });
        const tx2 = await fn(gw, "pay")(id("b"), ZeroAddress, 2n, { value: 2n, gasLimit });
        const before = await node.provider.getBlockNumber();
        await node.mine(1);
        assert.equal(await node.provider.getBlockNumber(), before + 1);

        const { traces } = await traceBlockByNumber(node.provider, before + 1);
        assert.deepEqual(
          traces.map((t) => t.txHash),
          [tx1.hash, tx2.hash],
        );
        const values = traces.map((t) => BigInt(t.result.calls?.[0]?.value ?? "0x0"));
        assert.deepEqual(values, [1n, 2n]);
      } finally {
        await node.setAutomine(true);
      }
    });
  });
});
