// Types of bin/allocator.mjs for the TypeScript callers (the bench, the tests).
export declare const JEMALLOC_PATHS: readonly string[];
/** glibc malloc's thresholds when it is the allocator (bin/allocator.mjs). */
export declare const GLIBC_TUNABLES: string;
/** The environment to start the process again with, or null to keep it as it is. Throws on a bad CHAINGATE_MALLOC. */
export declare function allocatorEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv | null;
