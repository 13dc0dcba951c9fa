// The bare server's first import: chaingate's V8 heap policy (bin/heap-policy.mjs) before the rest
// loads, as bin/chaingate sets it for serve, so the side-by-side ratios compare code, not heap settings.
import { applyHeapPolicy } from '../bin/heap-policy.mjs';

applyHeapPolicy(`${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`);
