// A loopback TCP proxy in front of the MongoDB-wire server that can stop a process in the middle
// of its work at a chosen write: armed with a command on a collection (the BSON of
// `{insert: "runs"}`, say) and which occurrence of it, it holds the connection that carries that
// command — the write never reaches the server and no answer comes back, every later byte of that
// connection is dropped too — so the process waits inside that write until the test kills it. The
// server behind it is real; only this one connection stops, as a process frozen at that instant.
import net from 'node:net';

export interface FreezingProxy {
  /** mongodb:// URL of the proxy (the server's, with the proxy's address). */
  readonly url: string;
  /** Holds the connection carrying the `nth` `command` on `collection` from now on; resolves when it happened. */
  freezeAt(command: 'insert' | 'update' | 'delete' | 'findAndModify', collection: string, nth?: number): Promise<void>;
  close(): Promise<void>;
}

/** The bytes a command document starts with: its first element, `command: "<collection>"`. */
function commandBytes(command: string, collection: string): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32LE(Buffer.byteLength(collection) + 1);
  return Buffer.concat([Buffer.from([0x02]), Buffer.from(command), Buffer.from([0]), length, Buffer.from(collection), Buffer.from([0])]);
}

function count(haystack: Buffer, needle: Buffer): number {
  let n = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) n++;
  return n;
}

export async function startFreezingProxy(mongoUrl: string): Promise<FreezingProxy> {
  const target = new URL(mongoUrl);
  let armed: { pattern: Buffer; left: number; frozen: () => void } | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    let held = false;
    let tail = Buffer.alloc(0);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk: Buffer) => {
      if (held) return;
      if (armed) {
        // The command may straddle two chunks: look at the end of the previous one too.
        const window = Buffer.concat([tail, chunk]);
        armed.left -= count(window, armed.pattern);
        tail = window.subarray(Math.max(0, window.length - armed.pattern.length + 1));
        if (armed.left <= 0) {
          held = true;
          const { frozen } = armed;
          armed = undefined;
          frozen();
          return;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!held) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(mongoUrl);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    freezeAt(command, collection, nth = 1) {
      return new Promise((resolve) => {
        armed = { pattern: commandBytes(command, collection), left: nth, frozen: resolve };
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
