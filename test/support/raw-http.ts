// Raw HTTP/1.1 over a socket, for tests of what a listener does with requests no well-behaved
// client sends: a head without its body, a body that trickles in. Every helper waits for the
// outcome (the server answers or closes), never for a time.
import net from 'node:net';

export interface RawReply {
  /** Everything the server sent. */
  text: string;
  /** True once the server closed the connection (false when `until` ended the wait first). */
  closed: boolean;
  /** Request bytes written before the connection closed. */
  bytesSent: number;
}

/**
 * Writes `request` and collects the reply until the server closes the connection, or `until`
 * says the reply is complete (then the client closes it).
 */
export function rawExchange(
  host: string,
  port: number,
  request: string,
  options: { until?: (text: string) => boolean } = {},
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(request));
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (options.until?.(text)) {
        socket.destroy();
        resolve({ text, closed: false, bytesSent: request.length });
      }
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the server's answer is the server closing too.
      if (err.code !== 'ECONNRESET') reject(err);
    });
    socket.on('close', () => resolve({ text, closed: true, bytesSent: request.length }));
  });
}

/** Writes `head`, then one body byte every `everyMs` until the server closes the connection. */
export function trickle(host: string, port: number, head: string, everyMs: number): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    let bytesSent = 0;
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const socket = net.connect(port, host, () => {
      socket.write(head);
      timer = setInterval(() => {
        if (socket.writable) socket.write('x', () => (bytesSent += 1));
      }, everyMs);
    });
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') {
        clearInterval(timer);
        reject(err);
      }
    });
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text, closed: true, bytesSent });
    });
  });
}
