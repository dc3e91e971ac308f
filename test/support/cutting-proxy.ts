// A loopback TCP proxy in front of a real service that can cut a connection the way a dying
// process or a broken network does: on demand, the next bytes a client sends are dropped and its
// connection is reset (RST) or closed (FIN), as a server killed between accepting a call and
// answering it (a killed process's sockets end either way, by whether unread bytes were waiting).
import net from 'node:net';

export interface CuttingProxy {
  /** host:port to give clients. */
  address: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Resets (default) or cleanly closes the connection that carries the next call. */
  cutNextCall(how?: 'reset' | 'close'): void;
  close(): Promise<void>;
}

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  let armed: 'reset' | 'close' | undefined;
  let connections = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    connections++;
    const upstream = net.connect(port, host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk) => {
      if (armed) {
        const how = armed;
        armed = undefined;
        upstream.destroy();
        if (how === 'reset') client.resetAndDestroy();
        else client.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    get connections() {
      return connections;
    },
    cutNextCall(how = 'reset') {
      armed = how;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
