// `node scripts/require-node.mjs && …` starts every npm script: on a Node.js older than chaingate
// needs it prints the same line as bin/chaingate and exits 2, before a test runner or tsx fails in
// its own way (npm's `engines` only warns).
import { nodeVersionProblem } from '../bin/node-version.mjs';

const problem = nodeVersionProblem(process.versions.node, process.execPath);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}
