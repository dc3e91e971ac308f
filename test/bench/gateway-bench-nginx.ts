// nginx as a reference proxy for the gateway benchmark: the Debian package
// (scripts/install-test-tools.sh), run in the foreground (never as the system service) with a
// generated config in a temp dir, one worker, loopback only, upstream keep-alive, no buffering
// (as the gateway streams), and an access line per request to /dev/null (as the gateway's).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface Nginx {
  port: number;
  /** CPU time (user + system, µs) of the master and its workers so far. */
  cpu(): number;
  stop(): Promise<void>;
}

const CANDIDATES = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'];

export function findNginx(): string | undefined {
  return CANDIDATES.find((p) => fs.existsSync(p));
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startNginx(binary: string, backendPort: number): Promise<Nginx> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-nginx-'));
  const port = await freePort();
  const temp = (name: string) => `${name} ${path.join(dir, name)};`;
  fs.writeFileSync(
    path.join(dir, 'nginx.conf'),
    `
worker_processes 1;
pid ${path.join(dir, 'nginx.pid')};
error_log ${path.join(dir, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log /dev/null combined buffer=64k;
  ${temp('client_body_temp_path')} ${temp('proxy_temp_path')} ${temp('fastcgi_temp_path')} ${temp('uwsgi_temp_path')} ${temp('scgi_temp_path')}
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 128; }
  server {
    listen 127.0.0.1:${port};
    keepalive_requests 100000;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn(
    binary,
    ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log'), '-g', 'daemon off;'],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = net
        .connect(port, '127.0.0.1', () => {
          s.destroy();
          resolve(true);
        })
        .on('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null) throw new Error(`nginx exited: ${fs.readFileSync(path.join(dir, 'error.log'), 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const master = child.pid!;
  return {
    port,
    cpu: () => [master, ...childrenOf(master)].reduce((sum, pid) => sum + cpuMicros(pid), 0),
    async stop() {
      child.kill('SIGQUIT');
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** utime + stime of one process, in µs: /proc counts clock ticks, 100 a second on Linux (USER_HZ). */
function cpuMicros(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}
