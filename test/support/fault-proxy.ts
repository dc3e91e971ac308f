// A loopback TCP proxy that can cut the connection to a real server and restore it, as a network
// partition or a restarting database does: cut() resets every open connection and every new one
// until restore(). The server behind it is real (the MongoDB-wire server); only the path fails.
import net from 'node:net';

export interface FaultProxy {
  /** host:port of the proxy. */
  readonly address: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  let open = true;
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (!open) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const socket of sockets) socket.resetAndDestroy();
    },
    restore() {
      open = true;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
