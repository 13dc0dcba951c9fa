import { ChainError } from '../domain/errors.ts';
// Shared by every chain reader: waiting that a stopping indexer can interrupt, and the backoff.

/** The indexer is stopping; give up retrying. */
export class RpcAborted extends ChainError {
  override readonly name = 'RpcAborted';
}

/** Capped exponential backoff with ±25% jitter: 250 ms, 500 ms, 1 s, … up to `maxMs`. */
export function backoffMs(attempt: number, maxMs: number): number {
  return Math.min(maxMs, 250 * 2 ** Math.min(attempt, 10)) * (0.75 + Math.random() * 0.5);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RpcAborted('stopping'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new RpcAborted('stopping'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
