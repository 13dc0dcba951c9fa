// Types of bin/heap-policy.mjs for the TypeScript callers (the bench).
/** Sets V8's young- and old-generation policy unless `nodeFlags` already chose them. */
export declare function applyHeapPolicy(nodeFlags: string): void;
