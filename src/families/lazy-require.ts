import { createRequire } from 'node:module';

// A chain library loaded on first use, synchronously: address rules run inside synchronous code
// (config resolution), and serve validates only the addresses an operator configured, so with the
// defaults it never loads ethers, bitcoinjs-lib or @ton/core (docs/performance.md, memory).
const require = createRequire(import.meta.url);

export function lazyRequire<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(specifier) as T);
}
