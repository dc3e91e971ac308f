// The Helm chart: a Deployment per service and an edge wired to them over gRPC, probes on the
// liveness and readiness endpoints, hardened pods, disruption budgets, an autoscaler, network
// policies, and manifests that kubeconform finds valid against the Kubernetes schemas.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { inheritedEnv } from '../support/child-env.ts';
import { findTool } from '../support/platform.ts';

const run = promisify(execFile);
const chart = path.resolve(import.meta.dirname, '../../deploy/helm/mindgate');
const helm = findTool('helm', [path.join(os.homedir(), 'go/bin/helm')]);
const kubeconform = findTool('kubeconform', [path.join(os.homedir(), 'go/bin/kubeconform')]);
const cache = process.env.MINDGATE_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'mindgate');
const schemas = path.join(cache, 'kubernetes-json-schema');
/** The chart's oldest Kubernetes (Chart.yaml kubeVersion) and the newest with schemas installed. */
const KUBERNETES_VERSIONS = ['1.27.0', '1.37.0'];
if (kubeconform && !fs.existsSync(path.join(schemas, 'installed'))) {
  if (process.env.CI === 'true') throw new Error(`no Kubernetes JSON schemas in ${schemas} (run scripts/install-test-tools.sh)`);
  console.warn(`no Kubernetes JSON schemas in ${schemas}: the kubeconform test is skipped (run scripts/install-test-tools.sh)`);
}
const canValidate = Boolean(kubeconform && fs.existsSync(path.join(schemas, 'installed')));

// Rendered manifests are free-form YAML.
type Doc = any;

/**
 * `helm template` for a cluster of `kubeVersion` (its default, 1.20, is below the chart's
 * kubeVersion); each of `sets` is a `--set`, or a `--set-json` when it starts with `json:`.
 */
async function renderFor(kubeVersion: string, ...sets: string[]): Promise<{ yaml: string; docs: Doc[] }> {
  const values = sets.flatMap((s) => (s.startsWith('json:') ? ['--set-json', s.slice(5)] : ['--set', s]));
  const args = ['template', 'prod', chart, '--kube-version', kubeVersion, ...values];
  const { stdout } = await run(helm!, args);
  return {
    yaml: stdout,
    docs: parseAllDocuments(stdout)
      .map((d) => d.toJSON())
      .filter(Boolean),
  };
}

const render = (...sets: string[]) => renderFor(KUBERNETES_VERSIONS[0]!, ...sets);
const byKind = (docs: Doc[], kind: string) => docs.filter((d) => d.kind === kind);
const named = (docs: Doc[], kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name);
const SERVICES = ['brain', 'entity-graph', 'agents', 'billing'];
const COMPONENTS = ['edge', ...SERVICES];
const root = path.resolve(import.meta.dirname, '../..');

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

/** Kubernetes' label selector semantics (an empty selector selects everything). */
function selects(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const ok = {
      In: has && e.values!.includes(labels[e.key]!),
      NotIn: !has || !e.values!.includes(labels[e.key]!),
      Exists: has,
      DoesNotExist: !has,
    }[e.operator];
    if (!ok) return false;
  }
  return true;
}

/** Whether the NetworkPolicies that select `target`'s pods admit `from`'s pods (same namespace) on `port`. */
function admits(policies: Doc[], target: Doc, from: Doc, port: number | string): boolean {
  const targetLabels = target.spec.template.metadata.labels;
  const fromLabels = from.spec.template.metadata.labels;
  const ports = target.spec.template.spec.containers[0].ports as { name: string; containerPort: number }[];
  const portNumber = typeof port === 'number' ? port : ports.find((p) => p.name === port)?.containerPort;
  const applying = policies.filter((p) => selects(p.spec.podSelector, targetLabels) && p.spec.policyTypes.includes('Ingress'));
  if (applying.length === 0) return true;
  return applying.some((p) =>
    (p.spec.ingress ?? []).some(
      (rule: { from?: { podSelector?: LabelSelector; namespaceSelector?: unknown; ipBlock?: unknown }[]; ports?: { port: number }[] }) =>
        (!rule.ports || rule.ports.some((r) => r.port === portNumber)) &&
        (!rule.from || rule.from.some((peer) => peer.podSelector && !peer.namespaceSelector && selects(peer.podSelector, fromLabels))),
    ),
  );
}

/** What a Deployment's pod runs: its command, and its environment and files as the chart gives them. */
interface PodProcess {
  name: string;
  command: string[];
  env: Record<string, string>;
  /** DATA_DIR on the pod's writable volume. */
  dataDir: string;
}

/**
 * The process of `deployment` as the rendered chart configures it, to be run here: the ConfigMap
 * and env values, Secret values from the Secrets the chart renders (a key of a Secret it does not
 * render, such as MONGODB_URL, stays unset: the stores are embedded), and each mounted Secret
 * written as files under `dir`, paths in the environment moved there with it. Only what a loopback
 * run needs is changed: listeners on 127.0.0.1 port 0, no metrics port, no Qdrant, one embedding
 * thread, and the other services' addresses on a closed local port.
 */
function podProcess(docs: Doc[], deployment: Doc, dir: string): PodProcess {
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const secret = (name: string, key: string): string | undefined => {
    const data = named(docs, 'Secret', name)?.data?.[key];
    return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
  };
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) Object.assign(env, named(docs, 'ConfigMap', from.configMapRef.name).data);
  for (const e of container.env) {
    const value = e.valueFrom ? secret(e.valueFrom.secretKeyRef.name, e.valueFrom.secretKeyRef.key) : e.value;
    if (value !== undefined) env[e.name] = value;
  }
  const moved = new Map<string, string>();
  for (const mount of container.volumeMounts) {
    const local = path.join(dir, mount.name);
    fs.mkdirSync(local, { recursive: true });
    moved.set(mount.mountPath, local);
    const volume = pod.volumes.find((v: { name: string }) => v.name === mount.name);
    for (const item of volume.secret?.items ?? []) {
      fs.writeFileSync(path.join(local, item.path), secret(volume.secret.secretName, item.key) ?? '', { mode: 0o600 });
    }
  }
  for (const [name, value] of Object.entries(env)) {
    for (const [mountPath, local] of moved) if (value.startsWith(`${mountPath}/`)) env[name] = local + value.slice(mountPath.length);
    if (name.endsWith('_SERVICE_ADDR')) env[name] = '127.0.0.1:1';
  }
  for (const name of ['METRICS_PORT', 'METRICS_HOST', 'QDRANT_URL']) delete env[name];
  Object.assign(env, { HOST: '127.0.0.1', GRPC_HOST: '127.0.0.1', EMBEDDINGS_THREADS: '1' });
  if (container.command.some((c: string) => c.startsWith('edge/')))
    Object.assign(env, { GATEWAY_PORT: '0', API_PORT: '0', WEB_PORT: '0', AUTH_PORT: '0' });
  for (const service of ['BRAIN', 'ENTITY_GRAPH', 'AGENTS', 'BILLING']) env[`${service}_GRPC_PORT`] = '0';
  return { name: deployment.metadata.name, command: container.command, env, dataDir: env.DATA_DIR! };
}

/** Starts the pod's process, waits until it listens, stops it, and lists what it left in DATA_DIR. */
async function runUntilListening(pod: PodProcess): Promise<string[]> {
  const [program, ...args] = pod.command;
  expect(program).toBe('node');
  const child = spawn(process.execPath, args, { cwd: root, env: { ...inheritedEnv(), ...pod.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    let listeners = 0;
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line);
        // A service logs its gRPC address; the edge each of its four listeners.
        if (typeof entry.address === 'string' || (typeof entry.listener === 'string' && ++listeners === 4)) resolve();
      }
    });
    exited.then((code) => reject(new Error(`${pod.name} exited with ${code}: ${output}`)));
  });
  child.kill('SIGTERM');
  await exited;
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(dir, entry.name));
      else files.push(path.relative(pod.dataDir, path.join(dir, entry.name)));
    }
  };
  if (fs.existsSync(pod.dataDir)) walk(pod.dataDir);
  return files.sort();
}

describe('helm chart', () => {
  it.skipIf(!helm)('lints strictly and renders every service and the edge', async () => {
    await run(helm!, ['lint', '--strict', chart]);
    const { docs } = await render('publicUrls.gateway=https://mcp.acme.test');
    const deployments = new Map(byKind(docs, 'Deployment').map((d) => [d.metadata.name, d]));
    expect([...deployments.keys()].sort()).toEqual(COMPONENTS.map((c) => `prod-mindgate-${c}`).sort());
    const env = (name: string) =>
      Object.fromEntries(
        deployments
          .get(name)
          .spec.template.spec.containers[0].env.map((e: { name: string; value?: string }) => [e.name, e.value ?? 'secret']),
      );
    const edge = env('prod-mindgate-edge');
    expect(edge).toMatchObject({
      PUBLIC_GATEWAY_URL: 'https://mcp.acme.test',
      BRAIN_SERVICE_ADDR: 'prod-mindgate-brain:50051',
      BILLING_SERVICE_ADDR: 'prod-mindgate-billing:50054',
      INTERNAL_TOKEN: 'secret',
      GATEWAY_STATE_SECRET: 'secret',
      MONGODB_URL: 'secret',
    });
    expect(env('prod-mindgate-brain')).toMatchObject({ BRAIN_GRPC_PORT: '50051', GRPC_HOST: '0.0.0.0', INTERNAL_TOKEN: 'secret' });
    expect(env('prod-mindgate-brain')).toMatchObject({ BILLING_SERVICE_ADDR: 'prod-mindgate-billing:50054' });
    // Only the Brain keeps search indexes in memory.
    expect(env('prod-mindgate-brain')).toMatchObject({ BRAIN_INDEX_MEMORY_MB: '256' });
    expect(env('prod-mindgate-agents')).not.toHaveProperty('BRAIN_INDEX_MEMORY_MB');
    expect(env('prod-mindgate-billing')).toMatchObject({ BRAIN_PASS_SECRET: 'secret' });
    expect(env('prod-mindgate-brain')).not.toHaveProperty('GATEWAY_STATE_SECRET');
    // No service overrides the shared EMBEDDINGS_THREADS: only the Brain loads the model.
    for (const service of ['brain', 'entity-graph', 'agents', 'billing'])
      expect(env(`prod-mindgate-${service}`)).not.toHaveProperty('EMBEDDINGS_THREADS');
    // The shared settings come from one ConfigMap that every pod reads.
    const config = named(docs, 'ConfigMap', 'prod-mindgate-config').data;
    expect(config).toMatchObject({
      SHUTDOWN_GRACE_MS: '10000',
      READINESS_TIMEOUT_MS: '2000',
      METRICS_PORT: '9464',
      DATA_DIR: '/data/mindgate',
    });
    for (const d of deployments.values()) {
      expect(d.spec.template.spec.containers[0].envFrom).toEqual([{ configMapRef: { name: 'prod-mindgate-config' } }]);
    }
    // One generated Secret holds both shared values, each long enough for its variable.
    const secret = named(docs, 'Secret', 'prod-mindgate-internal');
    for (const key of ['INTERNAL_TOKEN', 'GATEWAY_STATE_SECRET']) {
      expect(Buffer.from(secret.data[key], 'base64').toString('utf8').length, key).toBeGreaterThanOrEqual(32);
    }
    // The key-encryption key: a generated Secret, mounted as a file into the pods that seal with it.
    const kek = named(docs, 'Secret', 'prod-mindgate-key-encryption');
    expect(Buffer.from(kek.data['key-encryption-key'], 'base64').toString('utf8').length).toBeGreaterThanOrEqual(32);
    expect(kek.metadata.annotations['helm.sh/resource-policy']).toBe('keep');
    const edgePod = deployments.get('prod-mindgate-edge').spec.template.spec;
    expect(edge.KEY_ENCRYPTION_KEY_FILE).toBe('/etc/mindgate/key-encryption/key-encryption-key');
    expect(edge).not.toHaveProperty('KEY_ENCRYPTION_KEY_PREVIOUS_FILE');
    expect(edgePod.volumes).toContainEqual(
      expect.objectContaining({ name: 'key-encryption', secret: expect.objectContaining({ secretName: 'prod-mindgate-key-encryption' }) }),
    );
    expect(edgePod.containers[0].volumeMounts).toContainEqual({
      name: 'key-encryption',
      mountPath: '/etc/mindgate/key-encryption',
      readOnly: true,
    });
    expect(env('prod-mindgate-agents').KEY_ENCRYPTION_KEY_FILE).toBe('/etc/mindgate/key-encryption/key-encryption-key');
    expect(env('prod-mindgate-brain')).not.toHaveProperty('KEY_ENCRYPTION_KEY_FILE');
    expect(deployments.get('prod-mindgate-brain').spec.template.spec.volumes.map((v: { name: string }) => v.name)).toEqual(['data', 'tmp']);
    expect(byKind(docs, 'Service').map((d) => d.metadata.name)).toContain('prod-mindgate-brain');
  });

  // What each process loads is read from the code by running it: a secret the pod is not given is
  // generated in DATA_DIR, on the pod's emptyDir, where a second replica or the next pod has another.
  it.skipIf(!helm)(
    'gives every process the secrets it loads: started as rendered, none generates one on its emptyDir',
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-helm-pods-'));
      try {
        for (const sets of [[], ['keyEncryption.previousSecret=kek-1']]) {
          const { docs } = await render(...sets);
          if (sets.length)
            docs.push({
              kind: 'Secret',
              metadata: { name: 'kek-1' },
              data: { 'key-encryption-key': Buffer.from('p'.repeat(40)).toString('base64') },
            });
          const pods = byKind(docs, 'Deployment').map((d, i) => podProcess(docs, d, path.join(dir, `${sets.length}-${i}`)));
          expect(pods.map((p) => p.name).sort()).toEqual(COMPONENTS.map((c) => `prod-mindgate-${c}`).sort());
          const left = await Promise.all(pods.map(async (pod) => [pod.name, await runUntilListening(pod)] as const));
          for (const [name, files] of left) {
            // Only the embedded stores (MONGODB_URL and QDRANT_URL are left out here) and their locks.
            expect(
              files.filter((f) => !/^(records|vectors)\.sqlite(-wal|-shm|\.lock)?$/.test(f)),
              `${name} generated these in DATA_DIR`,
            ).toEqual([]);
          }
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    240_000,
  );

  it.skipIf(!helm)('admits every call the chart wires: each *_SERVICE_ADDR target lets its caller in', async () => {
    const { docs } = await render();
    const deployments = byKind(docs, 'Deployment');
    const policies = byKind(docs, 'NetworkPolicy');
    const wired: string[] = [];
    for (const caller of deployments) {
      for (const e of caller.spec.template.spec.containers[0].env) {
        if (!e.name.endsWith('_SERVICE_ADDR')) continue;
        const [host, port] = e.value.split(':');
        const service = named(docs, 'Service', host);
        expect(service, `${caller.metadata.name} ${e.name}`).toBeDefined();
        const servicePort = service.spec.ports.find((p: { port: number }) => p.port === Number(port));
        expect(servicePort, `${caller.metadata.name} ${e.name}`).toBeDefined();
        const targets = deployments.filter((d) => selects({ matchLabels: service.spec.selector }, d.spec.template.metadata.labels));
        expect(targets, host).toHaveLength(1);
        expect(admits(policies, targets[0], caller, servicePort.targetPort), `${caller.metadata.name} → ${host}`).toBe(true);
        wired.push(`${caller.metadata.labels['app.kubernetes.io/component']}→${host.replace('prod-mindgate-', '')}`);
      }
    }
    // The calls the services make to each other (not only the edge's) are among them.
    expect(wired).toEqual(expect.arrayContaining(['brain→billing', 'brain→entity-graph', 'agents→billing', 'edge→brain']));
    // And nothing else gets in: a service's port admits no pod that is not wired to it.
    for (const target of deployments.filter((d) => d.metadata.name !== 'prod-mindgate-edge')) {
      for (const caller of deployments) {
        const calls = caller.spec.template.spec.containers[0].env.some(
          (e: { name: string; value?: string }) => e.name.endsWith('_SERVICE_ADDR') && e.value?.startsWith(`${target.metadata.name}:`),
        );
        expect(admits(policies, target, caller, 'grpc'), `${caller.metadata.name} → ${target.metadata.name}`).toBe(calls);
      }
    }
  });

  it.skipIf(!helm)('mounts a given key-encryption Secret, and the previous one during a rotation', async () => {
    const { docs } = await render('keyEncryption.existingSecret=kek-2', 'keyEncryption.previousSecret=kek-1');
    expect(named(docs, 'Secret', 'prod-mindgate-key-encryption')).toBeUndefined();
    for (const component of ['edge', 'agents']) {
      const pod = named(docs, 'Deployment', `prod-mindgate-${component}`).spec.template.spec;
      const secrets = pod.volumes.filter((v: { secret?: unknown }) => v.secret);
      expect(
        secrets.map((v: { secret: { secretName: string } }) => v.secret.secretName),
        component,
      ).toEqual(['kek-2', 'kek-1']);
      expect(pod.containers[0].env).toEqual(
        expect.arrayContaining([
          { name: 'KEY_ENCRYPTION_KEY_FILE', value: '/etc/mindgate/key-encryption/key-encryption-key' },
          { name: 'KEY_ENCRYPTION_KEY_PREVIOUS_FILE', value: '/etc/mindgate/key-encryption-previous/key-encryption-key' },
        ]),
      );
      expect(pod.containers[0].volumeMounts).toContainEqual({
        name: 'key-encryption-previous',
        mountPath: '/etc/mindgate/key-encryption-previous',
        readOnly: true,
      });
    }
  });

  it.skipIf(!helm)('probes liveness and readiness apart: /livez and /readyz on the edge, the health names on the services', async () => {
    const { docs } = await render();
    const edge = named(docs, 'Deployment', 'prod-mindgate-edge').spec.template.spec.containers[0];
    expect(edge.startupProbe.httpGet).toEqual({ path: '/livez', port: 'gateway' });
    expect(edge.startupProbe.periodSeconds * edge.startupProbe.failureThreshold).toBe(120);
    expect(edge.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'gateway' });
    expect(edge.readinessProbe.httpGet).toEqual({ path: '/readyz?exclude=brain,billing,agents', port: 'gateway' });
    // The probe outlasts the checks' own deadline (READINESS_TIMEOUT_MS 2000).
    expect(edge.readinessProbe.timeoutSeconds).toBe(3);
    for (const service of SERVICES) {
      const c = named(docs, 'Deployment', `prod-mindgate-${service}`).spec.template.spec.containers[0];
      const port = c.ports.find((p: { name: string }) => p.name === 'grpc').containerPort;
      expect(c.startupProbe.grpc, service).toEqual({ port, service: 'liveness' });
      expect(c.livenessProbe.grpc, service).toEqual({ port, service: 'liveness' });
      expect(c.readinessProbe.grpc, service).toEqual({ port, service: 'readiness' });
    }
    const all = (await render('json:edge.readinessExclude=[]')).docs;
    expect(named(all, 'Deployment', 'prod-mindgate-edge').spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe('/readyz');
  });

  it.skipIf(!helm)('derives the termination grace from SHUTDOWN_GRACE_MS, after a preStop pause', async () => {
    for (const [grace, sleep, expected] of [
      [10_000, 5, 25],
      [30_500, 10, 51],
    ] as const) {
      const { docs } = await render(`shutdownGraceMs=${grace}`, `preStopSleepSeconds=${sleep}`);
      expect(named(docs, 'ConfigMap', 'prod-mindgate-config').data.SHUTDOWN_GRACE_MS).toBe(String(grace));
      for (const d of byKind(docs, 'Deployment')) {
        const pod = d.spec.template.spec;
        // The pause, the drain rounded up to seconds, and 10 s to close the stores.
        expect(pod.terminationGracePeriodSeconds, d.metadata.name).toBe(expected);
        expect(pod.containers[0].lifecycle.preStop.exec.command).toEqual(['sleep', String(sleep)]);
      }
    }
  });

  it.skipIf(!helm)('runs every pod unprivileged on a read-only root with writable data and tmp volumes, and with resources', async () => {
    const { docs } = await render();
    for (const d of byKind(docs, 'Deployment')) {
      const pod = d.spec.template.spec;
      const name = d.metadata.name;
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken, name).toBe(false);
      const c = pod.containers[0];
      expect(c.securityContext, name).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.volumeMounts, name).toEqual(
        expect.arrayContaining([
          { name: 'data', mountPath: '/data' },
          { name: 'tmp', mountPath: '/tmp' },
        ]),
      );
      expect(pod.volumes.find((v: { name: string }) => v.name === 'data').emptyDir.sizeLimit).toBeDefined();
      expect(c.resources.requests.cpu, name).toBeDefined();
      expect(c.resources.requests.memory, name).toBeDefined();
      expect(c.resources.limits.memory, name).toBeDefined();
      expect(c.ports.find((p: { name: string }) => p.name === 'metrics')?.containerPort, name).toBe(9464);
    }
  });

  it.skipIf(!helm)('budgets disruptions, autoscales the edge, and lets only the edge and wired services reach the services', async () => {
    const { docs } = await render('networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=monitoring');
    const budgets = byKind(docs, 'PodDisruptionBudget');
    expect(budgets.map((b) => b.spec.selector.matchLabels['app.kubernetes.io/component']).sort()).toEqual([...COMPONENTS].sort());
    for (const b of budgets) expect(b.spec.maxUnavailable).toBe(1);
    const hpa = named(docs, 'HorizontalPodAutoscaler', 'prod-mindgate-edge');
    expect(hpa.spec).toMatchObject({ scaleTargetRef: { kind: 'Deployment', name: 'prod-mindgate-edge' }, minReplicas: 3, maxReplicas: 10 });
    // The autoscaler owns the edge's replica count; the brain's stays in the Deployment.
    expect(named(docs, 'Deployment', 'prod-mindgate-edge').spec.replicas).toBeUndefined();
    expect(named(docs, 'Deployment', 'prod-mindgate-brain').spec.replicas).toBe(2);
    // The edge, and the services wired to call each one (the next test checks every wired call).
    const callers = (...components: string[]) => ({
      matchLabels: { 'app.kubernetes.io/instance': 'prod' },
      matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: components }],
    });
    for (const [service, port, from] of [
      ['brain', 50051, callers('agents', 'edge')],
      ['entity-graph', 50052, callers('brain', 'edge')],
      ['agents', 50053, callers('edge')],
      ['billing', 50054, callers('agents', 'brain', 'edge')],
    ] as const) {
      const policy = named(docs, 'NetworkPolicy', `prod-mindgate-${service}`);
      expect(policy.spec.policyTypes).toEqual(['Ingress']);
      expect(policy.spec.ingress[0]).toEqual({ from: [{ podSelector: from }], ports: [{ protocol: 'TCP', port }] });
      expect(policy.spec.ingress[1]).toEqual({
        from: [{ namespaceSelector: { matchLabels: { team: 'monitoring' } } }],
        ports: [{ protocol: 'TCP', port: 9464 }],
      });
    }
    const edge = named(docs, 'NetworkPolicy', 'prod-mindgate-edge');
    expect(edge.spec.ingress[0].ports.map((p: { port: number }) => p.port)).toEqual([8080, 8081, 8082, 8083]);
    // Without scrapers named, the metrics ports take no traffic at all.
    const closed = (await render()).docs;
    expect(named(closed, 'NetworkPolicy', 'prod-mindgate-brain').spec.ingress).toHaveLength(1);
    const fixed = (await render('edge.autoscaling.enabled=false')).docs;
    expect(byKind(fixed, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(named(fixed, 'Deployment', 'prod-mindgate-edge').spec.replicas).toBe(3);
  });

  it.skipIf(!helm)('rolls the pods when a setting or a Secret changes', async () => {
    const stable = ['internalToken.existingSecret=tokens', 'keyEncryption.existingSecret=kek'];
    const checksums = async (...sets: string[]) => {
      const { docs } = await render(...stable, ...sets);
      return byKind(docs, 'Deployment').map((d) => d.spec.template.metadata.annotations);
    };
    const before = await checksums();
    expect(await checksums()).toEqual(before);
    const changed = await checksums('logLevel=debug');
    for (const [i, annotations] of changed.entries()) {
      expect(annotations['checksum/config']).not.toBe(before[i]['checksum/config']);
      expect(annotations['checksum/secrets']).toBe(before[i]['checksum/secrets']);
    }
    // A generated Secret is part of the checksum (a new one is generated on each plain render).
    const generated = await render();
    expect(named(generated.docs, 'Deployment', 'prod-mindgate-edge').spec.template.metadata.annotations['checksum/secrets']).not.toBe(
      before[0]['checksum/secrets'],
    );
  });

  it.skipIf(!helm)('refuses values that do not fit values.schema.json', async () => {
    for (const bad of ['shutdownGraceMs=soon', 'metrics.port=8080', 'edge.readinessExclude[0]=nothing', 'image.pullPolicy=Sometimes']) {
      await expect(run(helm!, ['lint', '--strict', chart, '--set', bad]), bad).rejects.toMatchObject({
        stdout: expect.stringContaining('schema'),
      });
    }
  });

  it.skipIf(!helm || !canValidate)('renders manifests that kubeconform finds valid against the Kubernetes schemas', async () => {
    const variants = [
      [],
      ['edge.autoscaling.enabled=false', 'podDisruptionBudget.enabled=false', 'networkPolicy.enabled=false', 'metrics.enabled=false'],
      [
        'keyEncryption.previousSecret=kek-1',
        'qdrant.existingSecret=qdrant',
        'networkPolicy.metricsFrom[0].podSelector.matchLabels.app=prometheus',
      ],
    ];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-helm-'));
    try {
      // One run per version: kubeconform compiles each kind's schema once for all the files.
      for (const version of KUBERNETES_VERSIONS) {
        const files: string[] = [];
        for (const [i, sets] of variants.entries()) {
          files.push(path.join(dir, `variant-${i}-${version}.yaml`));
          fs.writeFileSync(files.at(-1)!, (await renderFor(version, ...sets)).yaml);
        }
        // One worker: parallel workers compile the same large schemas again (3 s against 8 s here).
        const { stdout } = await run(kubeconform!, [
          '-n',
          '1',
          '-strict',
          '-summary',
          '-output',
          'json',
          '-kubernetes-version',
          version,
          '-schema-location',
          `${schemas}/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
          ...files,
        ]);
        const summary = JSON.parse(stdout).summary;
        expect(summary, version).toMatchObject({ invalid: 0, errors: 0, skipped: 0 });
        expect(summary.valid).toBeGreaterThan(40);
      }
      // The checker does catch a broken manifest.
      const broken = path.join(dir, 'broken.yaml');
      fs.writeFileSync(broken, (await render()).yaml.replace('containerPort: 8080', 'containerPort: "8080"'));
      await expect(
        run(kubeconform!, [
          '-n',
          '1',
          '-strict',
          '-schema-location',
          `${schemas}/{{ .NormalizedKubernetesVersion }}-local{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
          '-kubernetes-version',
          KUBERNETES_VERSIONS[0]!,
          broken,
        ]),
      ).rejects.toMatchObject({ stdout: expect.stringContaining('containerPort') });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
