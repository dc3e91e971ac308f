// The image's HEALTHCHECK: liveness of the process in the container, with no store involved.
//   node deploy/healthcheck.ts [http://127.0.0.1:8080/livez]   an HTTP listener's /livez (the edge)
//   node deploy/healthcheck.ts grpc://127.0.0.1:50051          a service's grpc.health.v1 "liveness",
//                                                              asked in Connect JSON over HTTP/1.1
// Exit status 0 when alive, 1 otherwise (Docker's convention), with one line saying why.
// Kubernetes ignores HEALTHCHECK and uses the chart's probes on the same endpoints.
const DEFAULT_TARGET = 'http://127.0.0.1:8080/livez';
const TIMEOUT_MS = 4_000;

async function alive(target: string): Promise<string | undefined> {
  const signal = AbortSignal.timeout(TIMEOUT_MS);
  if (target.startsWith('grpc://')) {
    const res = await fetch(`http://${target.slice('grpc://'.length)}/grpc.health.v1.Health/Check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ service: 'liveness' }),
      signal,
    });
    const body = (await res.json().catch(() => ({}))) as { status?: string };
    return res.ok && body.status === 'SERVING' ? undefined : `health check answered HTTP ${res.status} ${JSON.stringify(body)}`;
  }
  const res = await fetch(target, { signal });
  return res.ok ? undefined : `${target} answered HTTP ${res.status}`;
}

const target = process.argv[2] ?? DEFAULT_TARGET;
try {
  const problem = await alive(target);
  if (problem) {
    process.stdout.write(`unhealthy: ${problem}\n`);
    process.exitCode = 1;
  }
} catch (err) {
  process.stdout.write(`unhealthy: ${target}: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
