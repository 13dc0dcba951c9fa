/**
 * Spawns a real Hardhat 3 JSON-RPC node (`hardhat node`, backed by EDR) for
 * integration tests.
 *
 *   const node = await startHardhatNode();
 *   t.after(() => node.stop());
 *
 * Details:
 * - The node runs as a child process: `node <hardhat>/dist/src/cli.js --config
 *   test/helpers/hardhat.config.ts node --hostname 127.0.0.1 --port <free>`.
 *   Hardhat 3 refuses to run without a config file, hence the dedicated config.
 * - Automine is ON by default: every transaction is mined into its own block as
 *   soon as it is sent, so `await tx.wait()` resolves immediately. To batch
 *   transactions into one block or test confirmation counting, call
 *   `await node.setAutomine(false)` (= `evm_setAutomine [false]`), send the
 *   txs, then `await node.mine(1)`; re-enable with `setAutomine(true)`.
 * - `snapshot()`/`revert(id)` wrap `evm_snapshot`/`evm_revert`. As in every
 *   Hardhat version a snapshot id is single-use: reverting to it consumes it
 *   (and every later snapshot). Take a new snapshot after reverting if you
 *   need to go back again.
 * - The child is killed by `stop()`, by a process 'exit' hook in this process,
 *   and - if this process dies without running hooks (SIGKILL, SIGTERM default
 *   handler) - by a watchdog preloaded into the child that exits as soon as
 *   its parent pid changes. No stray processes are left behind.
 * - Startup (spawn -> first successful eth_chainId) takes ~0.4-0.75 s here;
 *   stop() takes ~20 ms.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { HDNodeWallet, JsonRpcProvider, Network, Wallet, toQuantity } from "ethers";

/** Mnemonic of Hardhat's default funded accounts (10 000 ETH each). */
export const HARDHAT_MNEMONIC = "test test test test test test test test test test test junk";
/** Hardhat's default number of funded accounts. */
export const HARDHAT_ACCOUNT_COUNT = 20;

export interface StartHardhatNodeOptions {
  /** Chain id served by the node. Default 31337 (Hardhat's default). */
  chainId?: number;
  /** How long to wait for the JSON-RPC endpoint. Default 30 000 ms. */
  startupTimeoutMs?: number;
  /** Mirror the node's stdout/stderr to this process' stderr (also enabled by env CHAINGATE_HARDHAT_LOGS=1). */
  verbose?: boolean;
}

export interface HardhatNode {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  readonly chainId: number;
  /** pid of the hardhat child process. */
  readonly pid: number;
  /** ethers provider for `url` (static network, response caching disabled). */
  readonly provider: JsonRpcProvider;
  /** The 20 default Hardhat accounts (10 000 ETH each) as Wallets connected to `provider`. */
  readonly accounts: readonly Wallet[];
  /** Private keys of `accounts`, same order. */
  readonly privateKeys: readonly string[];
  /** Mines `blocks` empty blocks at once via `hardhat_mine` (hex block count). */
  mine(blocks?: number): Promise<void>;
  /** Turns automine on/off via `evm_setAutomine` (on by default). */
  setAutomine(enabled: boolean): Promise<void>;
  /** `evm_snapshot`; returns the snapshot id (single-use). */
  snapshot(): Promise<string>;
  /** `evm_revert`; throws if the node reports the snapshot as unknown. */
  revert(id: string): Promise<void>;
  /** Raw JSON-RPC call to the node. */
  send<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** The last lines the node printed (useful when a test fails). */
  output(): string;
  /** Kills the node (SIGTERM, then SIGKILL after 3 s) and releases resources. Idempotent. */
  stop(): Promise<void>;
}

/** One frame of Hardhat's `callTracer` output. See evm-fixtures.ts for a real example. */
export interface CallTraceFrame {
  type: string; // "CALL" | "STATICCALL" | "DELEGATECALL" | "CREATE" | "CREATE2" | ...
  from: string;
  to?: string;
  value?: string; // hex quantity, present for CALL/CREATE
  gas: string;
  gasUsed: string;
  input: string;
  output?: string;
  error?: string;
  revertReason?: string;
  calls?: CallTraceFrame[];
}

/** One entry of `debug_traceBlockByNumber(..., { tracer: "callTracer" })`. */
export interface BlockCallTrace {
  txHash: string;
  result: CallTraceFrame;
}

const HELPERS_DIR = path.dirname(fileURLToPath(import.meta.url));
// The config is read by the Hardhat CLI as TypeScript: always the source file, whether this runs from src/ or dist/.
const CONFIG_PATH = path.resolve(HELPERS_DIR, "..", "..", "src", "devnet", "hardhat.config.ts");
const HARDHAT_CLI = fileURLToPath(new URL("./cli.js", import.meta.resolve("hardhat")));
const OUTPUT_LINES_KEPT = 400;

/**
 * Preloaded into the child: as soon as our parent goes away (its ppid changes
 * when it is re-parented to init/subreaper), remove the node's temp dir and
 * exit. Covers the cases where this process dies without running its 'exit'
 * hooks (SIGKILL, default SIGTERM/SIGINT handling). Measured: the child is
 * gone ~300 ms after the parent is SIGKILLed.
 */
const WATCHDOG =
  "data:text/javascript," +
  encodeURIComponent(
    "const p=process.ppid,d=process.env.CHAINGATE_HARDHAT_TMPDIR;" +
      "setInterval(()=>{if(process.ppid!==p){" +
      "try{if(d)process.getBuiltinModule('node:fs').rmSync(d,{recursive:true,force:true})}catch{}" +
      "process.exit(0)}},200).unref();",
  );

/** Live children and their temp dirs, cleaned up on process exit. */
const liveChildren = new Map<ChildProcess, string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const [child, tmp] of liveChildren) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
      rmSync(tmp, { recursive: true, force: true });
    }
  });
}

/** Returns a TCP port that was free on 127.0.0.1 a moment ago. */
export async function getFreePort(): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("could not determine a free port"));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** Derives the default Hardhat accounts' private keys from HARDHAT_MNEMONIC. */
export function hardhatPrivateKeys(count: number = HARDHAT_ACCOUNT_COUNT): string[] {
  const root = HDNodeWallet.fromPhrase(HARDHAT_MNEMONIC, undefined, "m/44'/60'/0'/0");
  return Array.from({ length: count }, (_, i) => root.deriveChild(i).privateKey);
}

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    signal: AbortSignal.timeout(2_000),
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error !== undefined) throw new Error(`${method} failed: ${body.error.message} (code ${body.error.code})`);
  return body.result as T;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts a Hardhat 3 node on 127.0.0.1:<free port> and waits until it answers
 * JSON-RPC. Retries with a new port if the chosen one got taken meanwhile.
 */
export async function startHardhatNode(options: StartHardhatNodeOptions = {}): Promise<HardhatNode> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(options, await getFreePort());
    } catch (err) {
      lastError = err;
      if (!(err instanceof Error && /EADDRINUSE|address already in use/i.test(err.message))) throw err;
    }
  }
  throw lastError;
}

async function startOnce(options: StartHardhatNodeOptions, port: number): Promise<HardhatNode> {
  const chainId = options.chainId ?? 31337;
  const timeoutMs = options.startupTimeoutMs ?? 30_000;
  const verbose = options.verbose ?? process.env.CHAINGATE_HARDHAT_LOGS === "1";
  const url = `http://127.0.0.1:${port}`;
  const tmp = mkdtempSync(path.join(tmpdir(), "chaingate-hardhat-"));

  installExitHook();
  const child = spawn(
    process.execPath,
    [
      "--import",
      WATCHDOG,
      HARDHAT_CLI,
      "--config",
      CONFIG_PATH,
      "node",
      "--hostname",
      "127.0.0.1",
      "--port",
      String(port),
      "--chain-id",
      String(chainId),
    ],
    {
      cwd: path.resolve(HELPERS_DIR, "..", ".."),
      env: {
        ...process.env,
        CHAINGATE_HARDHAT_TMPDIR: tmp,
        HARDHAT_DISABLE_TELEMETRY: "true",
        NO_COLOR: "1",
        FORCE_COLOR: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  liveChildren.set(child, tmp);

  // Always drain the pipes (the node logs every RPC call; a full pipe would
  // block it) and keep the tail for diagnostics.
  const lines: string[] = [];
  const collect = (chunk: Buffer): void => {
    const text = chunk.toString("utf8");
    if (verbose) process.stderr.write(text);
    for (const line of text.split("\n")) {
      lines.push(line);
      if (lines.length > OUTPUT_LINES_KEPT) lines.shift();
    }
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const output = (): string => lines.join("\n");

  let exited = false;
  // 'close' (not 'exit'): fires once the process is gone AND its output has
  // been fully read, so startup errors (e.g. EADDRINUSE) are in output().
  const exitPromise = new Promise<void>((resolve) => {
    child.once("close", () => {
      exited = true;
      resolve();
    });
  });
  // A spawn failure ('error' without 'exit') must not crash the test process.
  child.once("error", (err) => {
    lines.push(`spawn error: ${err.message}`);
    exited = true;
  });

  let stopped = false;
  let provider: JsonRpcProvider | undefined;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    provider?.destroy();
    if (!exited && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => {
        if (!exited) child.kill("SIGKILL");
      }, 3_000);
      await exitPromise;
      clearTimeout(timer);
    }
    child.stdout?.destroy();
    child.stderr?.destroy();
    liveChildren.delete(child);
    rmSync(tmp, { recursive: true, force: true });
  };

  // Wait for the JSON-RPC endpoint.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) {
      await stop();
      throw new Error(`hardhat node exited during startup (code ${child.exitCode}, signal ${child.signalCode}):\n${output()}`);
    }
    // Fail fast on startup crashes (e.g. "Uncaught exception: Error: listen
    // EADDRINUSE ..." when the port was taken meanwhile) without waiting for
    // the process to finish exiting.
    if (/Uncaught exception/i.test(output())) {
      await stop();
      throw new Error(`hardhat node failed during startup on ${url}:\n${output()}`);
    }
    try {
      const id = await rpc<string>(url, "eth_chainId");
      if (Number(id) !== chainId) {
        await stop();
        throw new Error(`node on ${url} reports chain id ${Number(id)}, expected ${chainId}`);
      }
      break;
    } catch (err) {
      if (err instanceof Error && err.message.startsWith("node on ")) throw err;
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`hardhat node did not answer on ${url} within ${timeoutMs} ms:\n${output()}`);
      }
      await delay(50);
    }
  }

  // cacheTimeout -1: ethers otherwise reuses identical calls made within 250 ms
  // (e.g. a getBalance right after a tx would return the pre-tx value).
  provider = new JsonRpcProvider(url, Network.from(chainId), {
    staticNetwork: true,
    cacheTimeout: -1,
    pollingInterval: 100,
  });
  const privateKeys = hardhatPrivateKeys();
  const connectedProvider = provider;
  const accounts = privateKeys.map((pk) => new Wallet(pk, connectedProvider));

  const send = async <T = unknown>(method: string, params: unknown[] = []): Promise<T> =>
    (await connectedProvider.send(method, params)) as T;

  return {
    url,
    port,
    chainId,
    pid: child.pid ?? -1,
    provider: connectedProvider,
    accounts,
    privateKeys,
    async mine(blocks = 1): Promise<void> {
      if (!Number.isInteger(blocks) || blocks < 1) throw new RangeError(`mine: blocks must be a positive integer, got ${blocks}`);
      await send("hardhat_mine", [toQuantity(blocks)]);
    },
    async setAutomine(enabled: boolean): Promise<void> {
      await send("evm_setAutomine", [enabled]);
    },
    async snapshot(): Promise<string> {
      return await send<string>("evm_snapshot");
    },
    async revert(id: string): Promise<void> {
      const ok = await send<boolean>("evm_revert", [id]);
      if (!ok) throw new Error(`evm_revert(${id}) returned false: unknown or already used snapshot`);
    },
    send,
    output,
    stop,
  };
}

/**
 * Geth-style `debug_traceBlockByNumber(block, { tracer: "callTracer" })`: one
 * call tree per transaction, in block order. Internal native transfers show up
 * as nested `CALL` frames with a non-zero `value` (see evm-fixtures.ts for the
 * exact shape).
 *
 * IMPORTANT: Hardhat 3's node (EDR) does NOT implement
 * `debug_traceBlockByNumber` / `debug_traceBlockByHash` (JSON-RPC error -32004
 * "Method debug_traceBlockByNumber is not supported"). It does implement
 * `debug_traceTransaction` and `debug_traceCall` with `callTracer`. So this
 * helper tries the block method first and, if the node says the method is not
 * supported, rebuilds the same geth result (`[{ txHash, result }]`) from
 * `eth_getBlockByNumber` + `debug_traceTransaction` per transaction.
 * `usedFallback` tells which path was taken.
 */
export async function traceBlockByNumber(
  provider: JsonRpcProvider,
  blockNumber: number | bigint,
): Promise<{ traces: BlockCallTrace[]; usedFallback: boolean }> {
  const tag = toQuantity(blockNumber);
  try {
    const traces = (await provider.send("debug_traceBlockByNumber", [tag, { tracer: "callTracer" }])) as BlockCallTrace[];
    return { traces, usedFallback: false };
  } catch (err) {
    if (!isMethodNotSupported(err)) throw err;
  }
  const block = (await provider.send("eth_getBlockByNumber", [tag, false])) as { transactions: string[] } | null;
  if (block === null) throw new Error(`block ${blockNumber} not found`);
  const traces: BlockCallTrace[] = [];
  for (const txHash of block.transactions) {
    const result = (await provider.send("debug_traceTransaction", [txHash, { tracer: "callTracer" }])) as CallTraceFrame;
    traces.push({ txHash, result });
  }
  return { traces, usedFallback: true };
}

/** True if a provider error is the node's "method not supported/not found" answer. */
export function isMethodNotSupported(err: unknown): boolean {
  const e = err as { error?: { code?: number; message?: string }; message?: string } | null;
  const code = e?.error?.code;
  const message = `${e?.error?.message ?? ""} ${e?.message ?? ""}`;
  return code === -32004 || code === -32601 || /not supported|not found|does not exist/i.test(message);
}

/** Depth-first list of every frame in a call tree (root first). */
export function flattenCallTrace(frame: CallTraceFrame): CallTraceFrame[] {
  const out: CallTraceFrame[] = [frame];
  for (const child of frame.calls ?? []) out.push(...flattenCallTrace(child));
  return out;
}
