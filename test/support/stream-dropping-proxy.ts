// A loopback TCP proxy in front of a real HTTP listener that drops, on demand, the connections
// whose latest request matches a pattern (an event stream the browser is reading), as a network
// blip or a restarted load balancer does, and leaves every other connection alone. It listens
// before the platform starts, so that the platform's public URL can name it; the listener it
// forwards to is given once known.
import net from 'node:net';

export interface StreamDroppingProxy {
  readonly port: number;
  /** Where connections go (set once the real listener is up). */
  target: { host: string; port: number } | undefined;
  /** Resets every open connection whose latest request line matches; answers how many. */
  drop(requestLine: RegExp): number;
  close(): Promise<void>;
}

const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD) (\S+) HTTP\/1\.[01]\r\n/;

export async function startStreamDroppingProxy(): Promise<StreamDroppingProxy> {
  const open = new Map<net.Socket, { upstream: net.Socket; request: string }>();
  const server = net.createServer((client) => {
    const target = proxy.target;
    if (!target) {
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    const entry = { upstream, request: '' };
    open.set(client, entry);
    client.on('data', (chunk) => {
      const line = REQUEST_LINE.exec(chunk.toString('latin1'));
      if (line) entry.request = `${line[1]} ${line[2]}`;
      upstream.write(chunk);
    });
    upstream.pipe(client);
    for (const socket of [client, upstream]) socket.on('error', () => undefined);
    upstream.on('close', () => client.destroy());
    client.on('close', () => {
      open.delete(client);
      upstream.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxy: StreamDroppingProxy = {
    port: (server.address() as net.AddressInfo).port,
    target: undefined,
    drop(requestLine) {
      let dropped = 0;
      for (const [client, { upstream, request }] of open) {
        if (!requestLine.test(request)) continue;
        upstream.destroy();
        client.resetAndDestroy();
        dropped++;
      }
      return dropped;
    },
    async close() {
      for (const [client, { upstream }] of open) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
