// The Node.js this program needs, checked before anything that needs a newer one: bin/chaingate and
// every npm script (scripts/require-node.mjs) stop on an older Node with this one line. Plain
// JavaScript that any Node since 12 can run.

export const MINIMUM = [22, 17];

/** The one-line refusal for `version` ("20.20.2"), or null when it is new enough. */
export function nodeVersionProblem(version) {
  const [major, minor] = version.split('.').map(Number);
  if (major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1])) return null;
  return `chaingate: needs Node.js ${MINIMUM.join('.')} or later (24 LTS recommended); this is v${version}. Install it from https://nodejs.org or with a version manager (e.g. \`nvm install 24\`), then run again.`;
}
