// No gRPC port keeps a connection for ever: a socket that sends nothing, or an HTTP/2 preface with
// nothing after it, is closed after GRPC_HANDSHAKE_TIMEOUT_MS; an HTTP/2 connection without a call
// in progress is closed (GOAWAY) after GRPC_IDLE_TIMEOUT_MS. A call in progress, even a silent
// health Watch, keeps its connection, and a client whose idle connection was closed reconnects.
import http2 from 'node:http2';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpc, loadServiceClient } from '../support/grpc-js.ts';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

const HANDSHAKE_MS = 300;
const IDLE_MS = 500;
let platform: TestPlatform;
let host: string;
let port: number;

beforeAll(async () => {
  platform = await startTestPlatform({ GRPC_HANDSHAKE_TIMEOUT_MS: String(HANDSHAKE_MS), GRPC_IDLE_TIMEOUT_MS: String(IDLE_MS) });
  [host, port] = [platform.grpc.brain!.split(':')[0]!, Number(platform.grpc.brain!.split(':')[1])];
}, 60_000);
afterAll(() => platform?.stop());

/** Resolves when the server closes `socket`. */
function closedByServer(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.on('error', () => undefined);
    socket.resume(); // read what the server sends (its SETTINGS), or 'close' waits for it
    socket.once('close', () => resolve());
  });
}

const HealthClient = loadServiceClient('grpc/health/v1/health.proto', 'grpc.health.v1.Health');
type HealthStub = {
  check(req: unknown, cb: (err: grpc.ServiceError | null, res: { status: string }) => void): void;
  watch(req: unknown): grpc.ClientReadableStream<{ status: string }>;
};

describe('gRPC connection deadlines', () => {
  it('closes a connection that sends nothing', async () => {
    const socket = net.connect(port, host);
    await new Promise((resolve) => socket.once('connect', resolve));
    await closedByServer(socket);
    expect(socket.destroyed).toBe(true);
  }, 20_000);

  it('closes a connection that sends the HTTP/2 preface and nothing after it', async () => {
    const socket = net.connect(port, host);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    await closedByServer(socket);
    expect(socket.destroyed).toBe(true);
  }, 20_000);

  it('sends GOAWAY on an HTTP/2 connection with no call for the idle timeout', async () => {
    const session = http2.connect(`http://${host}:${port}`);
    session.on('error', () => undefined);
    const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    await goaway;
    await closed;
    expect(session.closed || session.destroyed).toBe(true);
  }, 20_000);

  it('keeps a silent health Watch open past the idle timeout, and a client reconnects after an idle close', async () => {
    const client = new HealthClient(platform.grpc.brain!, grpc.credentials.createInsecure()) as unknown as HealthStub & grpc.Client;
    const watch = client.watch({ service: '' });
    let ended = false;
    watch.on('error', () => (ended = true));
    watch.on('end', () => (ended = true));
    const first = await new Promise<{ status: string }>((resolve) => watch.once('data', resolve));
    expect(first.status).toBe('SERVING');
    // Several idle timeouts with no message on the stream: the call is in progress all the same.
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 4));
    expect(ended).toBe(false);
    watch.cancel();
    // The connection goes idle and is closed; the next call opens a new one.
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 3));
    const checked = await new Promise<{ status: string }>((resolve, reject) =>
      client.check({ service: '' }, (err, res) => (err ? reject(err) : resolve(res))),
    );
    expect(checked.status).toBe('SERVING');
    client.close();
  }, 20_000);
});
