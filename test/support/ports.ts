// Ports for listeners whose URL must be known before they start (OAuth issuers and resources
// compare URLs code point for code point). A port taken from the kernel's ephemeral range and
// released could be handed to another test's port-0 listener before we bind it again, so these
// come from below that range, checked free, and at random so parallel test files rarely meet.
import fs from 'node:fs';
import net from 'node:net';

function ephemeralStart(): number {
  try {
    const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {
    // Not Linux: fall back to the IANA dynamic range's start.
  }
  return 32_768;
}

const HIGH = ephemeralStart();
const LOW = Math.max(10_000, HIGH - 12_000);

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `count` distinct ports on 127.0.0.1 that were free a moment ago, outside the ephemeral range. */
export async function reservePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const candidate = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (!ports.includes(candidate) && (await isFree(candidate))) ports.push(candidate);
  }
  return ports;
}

export async function freePort(): Promise<number> {
  const [port] = await reservePorts(1);
  return port;
}
