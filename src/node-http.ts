import { createRequire } from 'node:module';

// node:http for the long-running processes, loaded with require() rather than `import … from
// 'node:http'`. An ES module import of a built-in builds a namespace of all its exports, which reads
// node:http's lazy WebSocket, MessageEvent and CloseEvent getters and so loads and compiles Node's
// bundled undici (fetch, WebSocket) into every `chaingate serve`, which never calls fetch (a bare
// Node: 62 MB resident against 48 MB; docs/performance.md#memory). require() leaves the getters alone.
const require = createRequire(import.meta.url);

export const http = require('node:http') as typeof import('node:http');
