// Gateway benchmark: the same backend driven directly and through every proxy in one run.
//   ./node_modules/.bin/node test/bench/gateway.bench.ts [--duration=8] [--connections=32,128] [--rounds=3] [--log=turn|sync|buffered|off] [--semi-space=MB] [--pretenuring] [--cpu-prof] [--no-nginx] [--no-undici] [--baseline=<checkout>]
// The processes share the machine's cores, as in production on a small host: the load
// generator (autocannon, here), the backend (plain Node HTTP) and the proxy under test. Proxies:
// the gateway (the real surface, with routing, credential handling, path checks and one pino
// access line per request) once with each backend client (GATEWAY_BACKEND_CLIENT=builtin and
// =undici), a bare tuned Node proxy (undici + .pipe(), nothing else) as the floor of Node here,
// and nginx (one worker, upstream keep-alive, no buffering: test/bench/gateway-bench-nginx.ts)
// as the reference proxy, when it is installed (scripts/install-test-tools.sh). The gateway is
// also driven at a server with a tool policy (whose MCP messages it parses: tool-filter.ts), and,
// with --baseline, the gateway of another checkout (main, say) runs beside it as a reference.
// Prints throughput, p50 and p99 latency, the gateway's CPU time per request (process.cpuUsage
// of its process, over the run) and the ratio to direct; then SSE forwarding latency; with
// --cpu-prof, where the gateway's CPU goes.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { findNginx, startNginx } from './gateway-bench-nginx.ts';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'] as const;
  }),
);
const DURATION = Number(args.get('duration') ?? 8);
const CONNECTIONS = (args.get('connections') ?? '32,128').split(',').map(Number);
const PROFILE = args.has('cpu-prof');
const LOG = args.get('log') ?? 'turn';
const ROUNDS = Number(args.get('rounds') ?? 3);
// V8's young generation for the gateway process (MB); the default sizing makes per-request
// garbage survive scavenges at proxy rates. Equivalent to NODE_OPTIONS=--max-semi-space-size=N.
const SEMI_SPACE = args.get('semi-space');
// GATEWAY_V8_PRETENURING=true: V8's default, which the gateway turns off (edge/gateway/v8-tuning.ts).
const PRETENURING = args.has('pretenuring');
const here = path.dirname(new URL(import.meta.url).pathname);

const BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: {
    name: 'search_memories',
    arguments: { query: 'how do we rotate the database credentials for the billing service', namespace: 'knowledge', limit: 5 },
    _meta: { progressToken: 'bench-progress-token-0001' },
  },
}).padEnd(300, ' ');
// A tools/list request: through a server with a tool policy, its answer is read and filtered.
const LIST_BODY = JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list', params: {} }).padEnd(300, ' ');
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
  authorization: `Bearer eyJhbGciOiJSUzI1NiJ9.${'e'.repeat(400)}.${'s'.repeat(340)}`,
};

async function start(file: string, argv: string[], execArgv: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = fork(path.resolve(here, file), argv, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'], execArgv });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
  return { child, port: (JSON.parse(line) as { port: number }).port };
}

function cpu(child: ChildProcess): Promise<NodeJS.CpuUsage> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as NodeJS.CpuUsage));
    child.send('cpu');
  });
}

const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-prof-'));
const backend = await start('gateway-bench-backend.ts', []);
const gatewayArgs = (client: string) => [`http://127.0.0.1:${backend.port}`, LOG, PRETENURING ? 'pretenuring' : '', client];
const gatewayExecArgv = [
  ...(PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=100'] : []),
  ...(SEMI_SPACE ? [`--max-semi-space-size=${SEMI_SPACE}`] : []),
];
const gateway = await start('gateway-bench-server.ts', gatewayArgs('builtin'), gatewayExecArgv);
const gatewayUndici = await start(
  'gateway-bench-server.ts',
  gatewayArgs('undici'),
  SEMI_SPACE ? [`--max-semi-space-size=${SEMI_SPACE}`] : [],
);
const bare = await start('gateway-bench-bare.ts', [`http://127.0.0.1:${backend.port}`]);
// The gateway of another checkout (its own bench server, same arguments): before/after in one run.
const baselineDir = args.get('baseline');
const baseline = baselineDir
  ? await start(path.resolve(baselineDir, 'test/bench/gateway-bench-server.ts'), gatewayArgs('builtin'), gatewayExecArgv)
  : undefined;
const nginxBinary = args.has('no-nginx') ? undefined : findNginx();
if (!nginxBinary && !args.has('no-nginx')) console.log('nginx is not installed (scripts/install-test-tools.sh): its row is left out');
const nginx = nginxBinary ? await startNginx(nginxBinary, backend.port) : undefined;
const targets: Record<string, string> = {
  direct: `http://127.0.0.1:${backend.port}/mcp`,
  ...(nginx ? { nginx: `http://127.0.0.1:${nginx.port}/mcp` } : {}),
  'bare proxy (undici)': `http://127.0.0.1:${bare.port}/mcp`,
  ...(args.has('no-undici') ? {} : { 'gateway (undici)': `http://127.0.0.1:${gatewayUndici.port}/bench/mcp` }),
  ...(baseline ? { 'gateway (baseline)': `http://127.0.0.1:${baseline.port}/bench/mcp` } : {}),
  gateway: `http://127.0.0.1:${gateway.port}/bench/mcp`,
  'gateway + tool policy': `http://127.0.0.1:${gateway.port}/bench-policy/mcp`,
  'gateway + policy, tools/list': `http://127.0.0.1:${gateway.port}/bench-policy/mcp#list`,
};
/** CPU time (µs) of each proxy's processes so far. */
const childCpu = (child: ChildProcess) => async () => {
  const u = await cpu(child);
  return u.user + u.system;
};
const cpuOf: Record<string, (() => Promise<number>) | undefined> = {
  direct: undefined,
  nginx: nginx ? async () => nginx.cpu() : undefined,
  'bare proxy (undici)': childCpu(bare.child),
  'gateway (undici)': childCpu(gatewayUndici.child),
  'gateway (baseline)': baseline ? childCpu(baseline.child) : undefined,
  gateway: childCpu(gateway.child),
  'gateway + tool policy': childCpu(gateway.child),
  'gateway + policy, tools/list': childCpu(gateway.child),
};

async function load(target: string, connections: number, duration: number): Promise<AutocannonResult> {
  const [url, body] = target.endsWith('#list') ? [target.slice(0, -5), LIST_BODY] : [target, BODY];
  return autocannon({ url, connections, duration, method: 'POST', headers: HEADERS, body, pipelining: 1 });
}

console.log(
  `gateway benchmark: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'cpu'}), Node ${process.version}, ${ROUNDS} rounds of ${DURATION}s per target, access log ${LOG}${PRETENURING ? ', V8 pretenuring on' : ''}${SEMI_SPACE ? `, gateway --max-semi-space-size=${SEMI_SPACE}` : ''}, load average ${os.loadavg()[0].toFixed(2)}`,
);
console.log(
  `request ${Buffer.byteLength(BODY)} bytes, response ${(await (await fetch(targets.direct, { method: 'POST', body: BODY })).text()).length} bytes`,
);
// Warm both paths (JIT, keep-alive pools).
for (const url of Object.values(targets)) await load(url, 32, 2);

// Rounds interleave the targets so that a burst of noise from elsewhere on the machine hits
// them alike; each figure is the median over the rounds.
interface Sample {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  proxyCpu?: number;
  backendCpu: number;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows: string[][] = [
  ['target', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'proxy CPU µs/req', 'backend CPU µs/req', 'vs direct'],
];
for (const connections of CONNECTIONS) {
  const samples = new Map<string, Sample[]>(Object.keys(targets).map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, url] of Object.entries(targets)) {
      const proxy = cpuOf[name];
      const g0 = proxy ? await proxy() : undefined;
      const b0 = await cpu(backend.child);
      const r = await load(url, connections, DURATION);
      const g1 = proxy ? await proxy() : undefined;
      const b1 = await cpu(backend.child);
      const perReq = (micros: number) => micros / Math.max(1, r.requests.total);
      samples.get(name)!.push({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        errors: r.errors + r.timeouts + r.non2xx,
        proxyCpu: g0 !== undefined && g1 !== undefined ? perReq(g1 - g0) : undefined,
        backendCpu: perReq(b1.user - b0.user + b1.system - b0.system),
      });
    }
  }
  const direct = median(samples.get('direct')!.map((x) => x.rps));
  for (const [name, list] of samples) {
    const rps = median(list.map((x) => x.rps));
    rows.push([
      name,
      String(connections),
      rps.toFixed(0),
      median(list.map((x) => x.p50)).toFixed(2),
      median(list.map((x) => x.p99)).toFixed(2),
      String(list.reduce((n, x) => n + x.errors, 0)),
      list[0].proxyCpu === undefined ? '-' : median(list.map((x) => x.proxyCpu!)).toFixed(1),
      median(list.map((x) => x.backendCpu)).toFixed(1),
      `${(rps / direct).toFixed(2)}×`,
    ]);
  }
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
for (const r of rows) console.log(r.map((c, i) => c.padStart(widths[i])).join('  '));

// SSE: is each event forwarded when it is written, and how late?
async function sse(url: string): Promise<{ events: number; reads: number; p50: number; p99: number }> {
  const res = await fetch(url, { headers: { authorization: HEADERS.authorization } });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const delays: number[] = [];
  let buffer = '';
  let reads = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    reads++;
    const now = performance.timeOrigin + performance.now();
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = /data: (.*)/.exec(event)?.[1];
      if (data) delays.push(now - (JSON.parse(data) as { t: number }).t);
    }
  }
  delays.sort((a, b) => a - b);
  const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))];
  return { events: delays.length, reads, p50: at(0.5), p99: at(0.99) };
}
console.log('\nSSE (200 events, one every 5 ms): delay from write at the backend to read at the client');
const sseTargets: [string, string][] = [
  ['direct', `http://127.0.0.1:${backend.port}`],
  ...(nginx ? [['nginx', `http://127.0.0.1:${nginx.port}`] as [string, string]] : []),
  ['gateway (undici)', `http://127.0.0.1:${gatewayUndici.port}/bench`],
  ['gateway', `http://127.0.0.1:${gateway.port}/bench`],
  // The SSE endpoint is this server's MCP path: every event goes through the tool filter.
  ['gateway + policy', `http://127.0.0.1:${gateway.port}/bench-policy-sse`],
];
for (const [name, base] of sseTargets) {
  const s = await sse(`${base}/sse?count=200&gap=5`);
  console.log(`${name.padStart(16)}  events ${s.events}  reads ${s.reads}  p50 ${s.p50.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms`);
}

backend.child.disconnect();
bare.child.disconnect();
await nginx?.stop();
const gateways = [gateway, gatewayUndici, ...(baseline ? [baseline] : [])];
const exited = Promise.all(gateways.map(({ child }) => new Promise((resolve) => child.once('exit', resolve))));
for (const { child } of gateways) child.disconnect();
await exited;

if (PROFILE) summarizeProfile(profileDir);
fs.rmSync(profileDir, { recursive: true, force: true });

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

function summarizeProfile(dir: string): void {
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) {
    console.log('no CPU profile was written');
    return;
  }
  const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    busy += micros;
    const category =
      functionName === '(garbage collector)'
        ? 'garbage collection'
        : functionName === '(program)'
          ? 'native (parser, libuv, syscalls)'
          : url.includes('/node_modules/undici/')
            ? 'undici (backend client)'
            : url.includes('/node_modules/pino') || url.includes('sonic-boom') || url.includes('fast-redact')
              ? 'pino (access log)'
              : url.includes('/edge/gateway/')
                ? 'gateway code (edge/gateway)'
                : url.includes('/edge/http/') || url.includes('/services/common/')
                  ? 'listener and router (edge/http)'
                  : url.startsWith('node:internal/http') || url.startsWith('node:_http') || url.startsWith('node:http')
                    ? 'node http server'
                    : url.startsWith('node:internal/streams') || url.startsWith('node:stream')
                      ? 'node streams'
                      : url.startsWith('node:net') || url.startsWith('node:internal/net') || url.includes('stream_base_commons')
                        ? 'node net/sockets'
                        : url.startsWith('node:')
                          ? 'other node internals'
                          : url === ''
                            ? functionName === 'writev' || functionName === 'writeString' || functionName === 'read'
                              ? `syscall: ${functionName}`
                              : 'other native'
                            : 'other';
    categories.set(category, (categories.get(category) ?? 0) + micros);
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules\/|edge\/|services\/)/, '$1')}:${lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  console.log(
    `\nwhere the gateway's CPU goes (--cpu-prof: sampling slows it; use the figures above from a run without it; ${(busy / 1e6).toFixed(1)} s busy, all runs including warm-up):`,
  );
  let small = 0;
  for (const [c, t] of [...categories].sort((a, b) => b[1] - a[1])) {
    if (t / busy < 0.005) small += t;
    else console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)}%  ${c}`);
  }
  console.log(`  ${((100 * small) / busy).toFixed(1).padStart(5)}%  everything else`);
  console.log('top functions by self time:');
  for (const [f, t] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 20))
    console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)}%  ${f}`);
}
