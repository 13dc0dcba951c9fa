/**
 * Minimal Hardhat 3 config used ONLY by src/devnet/hardhat-node.ts to run
 * `hardhat --config src/devnet/hardhat.config.ts node`. Hardhat 3 refuses to
 * run any task without a config file (HHE3); keeping it here instead of the
 * repo root keeps the root clean.
 *
 * Hardhat 3 resolves the project root to the closest package.json (the repo
 * root), and `hardhat node` creates/watches `<artifacts>/build-info` on start.
 * The helper points artifacts/cache at a per-node temp dir through
 * CHAINGATE_HARDHAT_TMPDIR so no `artifacts/` or `cache/` dir appears in the
 * repo. Contracts are NOT compiled by Hardhat: they are prebuilt with solc-js
 * into contracts/build/ (scripts/build-contracts.ts).
 */
import { defineConfig } from "hardhat/config";

const tmp = process.env.CHAINGATE_HARDHAT_TMPDIR ?? "test/artifacts/hardhat";

export default defineConfig({
  paths: {
    artifacts: `${tmp}/artifacts`,
    cache: `${tmp}/cache`,
  },
  networks: {
    // The network `hardhat node` serves. Automine is on (every tx is mined
    // into its own block immediately); tests can turn it off at run time with
    // `evm_setAutomine` (see HardhatNode.setAutomine).
    node: {
      type: "edr-simulated",
      chainType: "l1",
      chainId: 31337,
      mining: { auto: true, interval: 0 },
    },
  },
});
