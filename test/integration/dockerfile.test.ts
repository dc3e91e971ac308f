// The image, checked without a Docker engine (none is installable on the machines of this
// project): hadolint lints the Dockerfile; its instructions, parsed, say multi-stage, production
// dependencies only, an unprivileged numeric user, a data volume, a HEALTHCHECK on /livez and
// node itself as the command; and the image's files, assembled as its COPY instructions say with
// the production install its first stage runs, start the platform, which that HEALTHCHECK
// command then finds alive. What is not verified here: the base image's own contents and a real
// `docker build`.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DockerfileParser, type Instruction } from 'dockerfile-ast';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTool } from '../support/platform.ts';
import { reservePorts } from '../support/ports.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const dockerfilePath = path.join(root, 'deploy/Dockerfile');
const cache = process.env.MINDGATE_CACHE_DIR ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'mindgate');
const hadolint = findTool('hadolint', [path.join(cache, 'hadolint/hadolint')]);
const node = process.execPath;

interface Stage {
  name: string | null;
  instructions: Instruction[];
}

function stages(): Stage[] {
  const out: Stage[] = [];
  for (const instruction of DockerfileParser.parse(fs.readFileSync(dockerfilePath, 'utf8')).getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const name = instruction.getArguments()[2]?.getValue() ?? null;
      out.push({ name, instructions: [] });
    }
    out.at(-1)?.instructions.push(instruction);
  }
  return out;
}

const args = (i: Instruction) => i.getArguments().map((a) => a.getValue());
/** The instruction's flags (`--from=dependencies` → from=dependencies). */
const flags = (i: Instruction) =>
  Object.fromEntries(
    ((i as unknown as { getFlags?(): { getName(): string; getValue(): string | null }[] }).getFlags?.() ?? []).map((f) => [
      f.getName(),
      f.getValue(),
    ]),
  );
const of = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.getKeyword() === keyword);
/** The exec form's strings: ["node", "edge/main.ts"] → node, edge/main.ts. */
const execForm = (i: Instruction) => JSON.parse(i.getArgumentsContent()!.replace(/^.*?(\[)/s, '$1')) as string[];

describe('deploy/Dockerfile', () => {
  it.skipIf(!hadolint)('passes hadolint', async () => {
    const { stdout } = await run(hadolint!, ['--format', 'json', dockerfilePath]).catch((e) => e);
    expect(JSON.parse(stdout)).toEqual([]);
  });

  it('builds in two stages and keeps only production dependencies', () => {
    const [deps, runtime, ...more] = stages();
    expect(more).toEqual([]);
    expect(deps!.name).toBe('dependencies');
    const install = of(deps!, 'RUN').map((i) => i.getArgumentsContent() ?? '');
    expect(install.join(' ')).toMatch(/npm ci --omit=dev/);
    const fromDeps = of(runtime!, 'COPY').filter((i) => flags(i).from === 'dependencies');
    expect(fromDeps.map(args)).toEqual([['/app/node_modules', './node_modules']]);
    // The runtime stage installs nothing itself.
    expect(of(runtime!, 'RUN').map((i) => i.getArgumentsContent())).not.toContainEqual(expect.stringMatching(/npm (ci|install)/));
    // The `node` npm package (the Node of `npm start`) is a devDependency: the image runs its base's Node.
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect(pkg.dependencies).not.toHaveProperty('node');
    expect(pkg.devDependencies).toHaveProperty('node');
  });

  it('runs node as an unprivileged numeric user, with a data volume, a HEALTHCHECK on /livez and no npm in between', () => {
    const runtime = stages().at(-1)!;
    const [user] = of(runtime, 'USER').map(args);
    expect(user![0]).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
    expect(of(runtime, 'VOLUME').map((i) => execForm(i))).toEqual([['/data']]);
    const env = Object.fromEntries(of(runtime, 'ENV').flatMap((i) => args(i).map((kv) => kv.split('=', 2))));
    expect(env).toMatchObject({ DATA_DIR: '/data', NODE_ENV: 'production', HOST: '0.0.0.0' });
    const [healthcheck] = of(runtime, 'HEALTHCHECK');
    expect(execForm(healthcheck!)).toEqual(['node', 'deploy/healthcheck.ts', 'http://127.0.0.1:8080/livez']);
    expect(of(runtime, 'CMD').map((i) => execForm(i))).toEqual([['node', 'edge/main.ts']]);
    expect(of(runtime, 'ENTRYPOINT')).toEqual([]);
  });
});

describe("the image's files with production dependencies only", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-image-'));
  const app = path.join(dir, 'app');
  let child: ChildProcess | undefined;
  let ports: number[];
  let logs = '';

  beforeAll(async () => {
    // The files the runtime stage copies from the build context, where it copies them.
    fs.mkdirSync(app);
    const runtime = stages().at(-1)!;
    for (const copy of of(runtime, 'COPY')) {
      if (flags(copy).from) continue;
      const [source, target, ...rest] = args(copy);
      expect(rest, 'one source per COPY').toEqual([]);
      // `COPY file ./` lands in the folder, as Docker does.
      const to = target!.endsWith('/') ? path.join(app, target!, path.basename(source!)) : path.join(app, target!);
      fs.cpSync(path.join(root, source!), to, { recursive: true });
    }
    fs.cpSync(path.join(root, 'package-lock.json'), path.join(app, 'package-lock.json'));
    // What the first stage runs (from the npm cache when it can).
    await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: app });
    ports = await reservePorts(6);
    const [gateway, api, web, auth, brain, spare] = ports;
    child = spawn(node, ['edge/main.ts'], {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        DATA_DIR: path.join(dir, 'data'),
        HOST: '127.0.0.1',
        GATEWAY_PORT: String(gateway),
        API_PORT: String(api),
        WEB_PORT: String(web),
        AUTH_PORT: String(auth),
        BRAIN_GRPC_PORT: String(brain),
        ENTITY_GRAPH_GRPC_PORT: '0',
        AGENTS_GRPC_PORT: '0',
        BILLING_GRPC_PORT: '0',
        EMBEDDINGS_THREADS: '1',
        LOG_LEVEL: 'warn',
        METRICS_PORT: String(spare),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk) => (logs += chunk));
    child.stderr!.on('data', (chunk) => (logs += chunk));
    const deadline = Date.now() + 90_000;
    while (
      !(await fetch(`http://127.0.0.1:${gateway}/livez`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the platform did not start: ${logs}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const healthcheck = (target: string) =>
    run(node, ['deploy/healthcheck.ts', target], { cwd: app }).then(
      () => 0,
      (e: { code: number }) => e.code,
    );

  it('leaves the devDependencies out, the node npm package among them', () => {
    expect(fs.existsSync(path.join(app, 'node_modules/node'))).toBe(false);
    expect(fs.existsSync(path.join(app, 'node_modules/vitest'))).toBe(false);
    expect(fs.existsSync(path.join(app, 'node_modules/prom-client'))).toBe(true);
  });

  it('starts the platform, ready and serving, and its HEALTHCHECK command finds it alive', async () => {
    const [gateway, , , , brain, metrics] = ports;
    expect((await fetch(`http://127.0.0.1:${gateway}/readyz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${metrics}/metrics`)).status).toBe(200);
    expect(await healthcheck(`http://127.0.0.1:${gateway}/livez`)).toBe(0);
    // A service's container: its gRPC port's liveness.
    expect(await healthcheck(`grpc://127.0.0.1:${brain}`)).toBe(0);
    // Nothing listening: unhealthy.
    const [closed] = await reservePorts(1);
    expect(await healthcheck(`http://127.0.0.1:${closed}/livez`)).toBe(1);
    expect(await healthcheck(`grpc://127.0.0.1:${closed}`)).toBe(1);
  });
});
