import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Listens on 127.0.0.1 and a free port; close() also drops open keep-alive connections. */
export async function listenLocal(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
