// Types of bin/node-version.mjs for the TypeScript callers (the tests).
export declare const MINIMUM: readonly [number, number];
/** The one-line refusal for `version` ("20.20.2"), or null when it is new enough. */
export declare function nodeVersionProblem(version: string): string | null;
