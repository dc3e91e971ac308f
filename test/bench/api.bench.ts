// Agents API benchmark: an authenticated list (token or key verification, the matrix's role
// check, the rate-limit and usage counters, one page of 50 members from the store) beside
// `/health` in the same run, at CONNECTIONS connections, on the embedded records store and on the
// MongoDB-wire test server. The load comes from autocannon in its own process, so it does not
// share the platform's event loop.
//
//   ./node_modules/.bin/node test/bench/api.bench.ts            (DURATION=5 CONNECTIONS=32 MEMBERS=60,
//                                                                ONLY=<part of a request's label>)
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import { startMongoWireServer, mongoWireServerAvailability } from '../support/mongo-server.ts';
import { obtainAccessToken, startOAuthTestPlatform } from '../support/oauth-client.ts';
import type { TestPlatform } from '../support/platform.ts';
import { printTable } from './support.ts';

const DURATION = Number(process.env.DURATION ?? 5);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32);
const MEMBERS = Number(process.env.MEMBERS ?? 60);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

interface Load {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(url: string, headers: Record<string, string>): Promise<Load> {
  const args = ['-c', String(CONNECTIONS), '-d', String(DURATION), '-j', '--renderStatusCodes', url];
  for (const [k, v] of Object.entries(headers)) args.unshift('-H', `${k}=${v}`);
  const { stdout } = await run(path.join(root, 'node_modules/.bin/autocannon'), args, { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as { requests: { average: number }; latency: { p50: number; p99: number }; non2xx: number };
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx };
}

async function measureStore(name: string, env: Record<string, string>): Promise<Record<string, string | number>[]> {
  const platform: TestPlatform = await startOAuthTestPlatform({
    API_RATE_LIMIT_PROFESSIONAL: '1000000',
    LOG_LEVEL: 'warn',
    ACCESS_LOG: 'false',
    ...env,
  });
  try {
    const api = platform.ctx.config.publicUrls.api;
    const owner = await obtainAccessToken(platform, { resource: api });
    const org = owner.organizationId;
    for (let i = 0; i < MEMBERS; i++) {
      await platform.ctx.clients.organizations.addMember({ organizationId: org, userId: `usr_bench_${i}`, role: Role.MEMBER });
    }
    const key = (await (
      await fetch(`${api}/organizations/${org}/api-keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      })
    ).json()) as { secret: string };
    const list = `${api}/organizations/${org}/members?page_size=50`;
    const targets: [string, string, Record<string, string>][] = [
      ['/health', `${api}/health`, {}],
      ['get organization (token)', `${api}/organizations/${org}`, { authorization: `Bearer ${owner.access_token}` }],
      ['list 1 member (token)', `${api}/organizations/${org}/members?page_size=1`, { authorization: `Bearer ${owner.access_token}` }],
      ['list members (token)', list, { authorization: `Bearer ${owner.access_token}` }],
      ['list members (API key)', list, { 'x-api-key': key.secret }],
    ];
    await load(`${api}/health`, {}); // warm-up
    const only = process.env.ONLY;
    const rows: Record<string, string | number>[] = [];
    let health = 0;
    for (const [label, url, headers] of targets) {
      if (only && label !== '/health' && !label.includes(only)) continue;
      const r = await load(url, headers);
      if (label === '/health') health = r.rps;
      rows.push({
        store: name,
        request: label,
        'req/s': r.rps,
        'vs /health': `${(r.rps / health).toFixed(2)}x`,
        'p50 ms': r.p50,
        'p99 ms': r.p99,
        non2xx: r.non2xx,
      });
    }
    return rows;
  } finally {
    await platform.stop();
  }
}

console.log(
  `Agents API benchmark: ${os.cpus().length} cores, Node ${process.version}, ${CONNECTIONS} connections, ${DURATION}s per request, ${MEMBERS + 1} members, load average ${os.loadavg()[0].toFixed(2)}`,
);
const rows = await measureStore('embedded (SQLite)', {});
const mongoWire = mongoWireServerAvailability();
if (mongoWire.available) {
  const mongo = await startMongoWireServer();
  try {
    rows.push(...(await measureStore('MongoDB wire (mongo-java-server)', { MONGODB_URL: mongo.url })));
  } finally {
    await mongo.stop();
  }
} else {
  console.log(`MongoDB-wire run skipped: ${mongoWire.reason}`);
}
printTable('authenticated list beside /health', rows);
