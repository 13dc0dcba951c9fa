/**
 * Compiles every `.sol` file under `contracts/` with the solc-js package that
 * is installed as a devDependency and writes one artifact per deployable
 * contract to `contracts/build/<ContractName>.json`.
 *
 * The artifacts are committed, so the daemon never needs a compiler at run
 * time. The build is deterministic: sources are sorted, source unit names are
 * repo-relative POSIX paths and every compiler setting is pinned below, so the
 * same sources + the same solc version produce byte-identical output.
 *
 * Usage:
 *   npm run build:contracts            # (re)write contracts/build/*.json
 *   npm run build:contracts -- --check # exit 1 if contracts/build is stale
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const CONTRACTS_DIR = path.join(REPO_ROOT, "contracts");
const BUILD_DIR = path.join(CONTRACTS_DIR, "build");

/**
 * `paris` (pre-Shanghai: no PUSH0/MCOPY/transient storage) so the same
 * bytecode deploys on every EVM chain we target, including ones that lag
 * behind Ethereum mainnet hardforks.
 */
const EVM_VERSION = "paris";
const OPTIMIZER = { enabled: true, runs: 200 } as const;

export interface ContractArtifact {
  contractName: string;
  sourceName: string;
  abi: unknown[];
  bytecode: string;
  deployedBytecode: string;
  compilerVersion: string;
  evmVersion: string;
  optimizer: { enabled: boolean; runs: number };
}

interface SolcError {
  severity: "error" | "warning" | "info";
  formattedMessage?: string;
  message: string;
}

interface SolcContractOutput {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

function findSolFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (full === BUILD_DIR) continue;
      out.push(...findSolFiles(full));
    } else if (entry.isFile() && entry.name.endsWith(".sol")) {
      out.push(full);
    }
  }
  return out;
}

function toSourceName(file: string): string {
  return path.relative(REPO_ROOT, file).split(path.sep).join("/");
}

function compileContracts(): Map<string, ContractArtifact> {
  const files = findSolFiles(CONTRACTS_DIR).sort((a, b) =>
    toSourceName(a) < toSourceName(b) ? -1 : toSourceName(a) > toSourceName(b) ? 1 : 0,
  );
  if (files.length === 0) throw new Error(`no .sol files under ${CONTRACTS_DIR}`);

  const sources: Record<string, { content: string }> = {};
  for (const file of files) sources[toSourceName(file)] = { content: readFileSync(file, "utf8") };

  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: OPTIMIZER,
      evmVersion: EVM_VERSION,
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
  };

  const findImports = (importPath: string): { contents: string } | { error: string } => {
    // Every source under contracts/ is already in the input; anything else is
    // an external dependency, which this project deliberately does not have.
    const abs = path.resolve(REPO_ROOT, importPath);
    if (abs.startsWith(CONTRACTS_DIR + path.sep) && existsSync(abs)) {
      return { contents: readFileSync(abs, "utf8") };
    }
    return { error: `import not found: ${importPath}` };
  };

  const compilerVersion: string = solc.version();
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;

  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  for (const e of output.errors ?? []) {
    if (e.severity !== "error") console.warn(e.formattedMessage ?? e.message);
  }
  if (errors.length > 0) {
    throw new Error(`solc compilation failed:\n${errors.map((e) => e.formattedMessage ?? e.message).join("\n")}`);
  }

  const artifacts = new Map<string, ContractArtifact>();
  for (const sourceName of Object.keys(output.contracts ?? {}).sort()) {
    const contracts = output.contracts?.[sourceName] ?? {};
    for (const contractName of Object.keys(contracts).sort()) {
      const c = contracts[contractName];
      if (c === undefined) continue;
      const bytecode = c.evm.bytecode.object;
      // Interfaces / abstract contracts have no bytecode: nothing to deploy.
      if (bytecode.length === 0) continue;
      const existing = artifacts.get(contractName);
      if (existing !== undefined) {
        throw new Error(
          `duplicate contract name ${contractName} in ${existing.sourceName} and ${sourceName}; ` +
            "contracts/build/ is flat, names must be unique",
        );
      }
      artifacts.set(contractName, {
        contractName,
        sourceName,
        abi: c.abi,
        bytecode: `0x${bytecode}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
        compilerVersion,
        evmVersion: EVM_VERSION,
        optimizer: { ...OPTIMIZER },
      });
    }
  }
  return artifacts;
}

function serialize(artifact: ContractArtifact): string {
  return `${JSON.stringify(artifact, null, 2)}\n`;
}

function main(): void {
  const check = process.argv.includes("--check");
  const artifacts = compileContracts();
  const wanted = new Map<string, string>();
  for (const [name, artifact] of artifacts) wanted.set(`${name}.json`, serialize(artifact));

  const present = existsSync(BUILD_DIR) ? readdirSync(BUILD_DIR).filter((f) => f.endsWith(".json")) : [];

  if (check) {
    const problems: string[] = [];
    for (const [file, content] of wanted) {
      const full = path.join(BUILD_DIR, file);
      if (!existsSync(full)) problems.push(`missing ${file}`);
      else if (readFileSync(full, "utf8") !== content) problems.push(`outdated ${file}`);
    }
    for (const file of present) if (!wanted.has(file)) problems.push(`stale ${file}`);
    if (problems.length > 0) {
      console.error(`contracts/build is out of date (run npm run build:contracts):\n  ${problems.join("\n  ")}`);
      process.exitCode = 1;
    } else {
      console.log(`contracts/build is up to date (${wanted.size} artifacts, solc ${solc.version()})`);
    }
    return;
  }

  mkdirSync(BUILD_DIR, { recursive: true });
  for (const file of present) if (!wanted.has(file)) rmSync(path.join(BUILD_DIR, file));
  for (const [file, content] of wanted) writeFileSync(path.join(BUILD_DIR, file), content);
  console.log(`wrote ${wanted.size} artifacts to contracts/build (solc ${solc.version()}): ${[...artifacts.keys()].join(", ")}`);
}

main();
