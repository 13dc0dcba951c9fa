// Types of bin/node-version.mjs for the TypeScript callers (the tests).
export declare const MINIMUM: readonly [number, number];
/** Where README's supported install without a version manager puts Node.js 24; the systemd units run it. */
export declare const NODE24_PATH: string;
/** The one-line refusal for `version` ("20.20.2"), or null when it is new enough. */
export declare function nodeVersionProblem(version: string, execPath?: string): string | null;
