// The Helm chart renders a Deployment per service and an edge wired to them over gRPC.
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { findTool } from '../support/platform.ts';

const run = promisify(execFile);
const chart = path.resolve(import.meta.dirname, '../../deploy/helm/mindgate');
const helm = findTool('helm', [path.join(os.homedir(), 'go/bin/helm')]);

describe('helm chart', () => {
  it.skipIf(!helm)('lints and renders every service and the edge', async () => {
    await run(helm!, ['lint', chart]);
    const { stdout } = await run(helm!, ['template', 'prod', chart, '--set', 'publicUrls.gateway=https://mcp.acme.test']);
    const docs = parseAllDocuments(stdout)
      .map((d) => d.toJSON())
      .filter(Boolean);
    const deployments = new Map(docs.filter((d) => d.kind === 'Deployment').map((d) => [d.metadata.name, d]));
    expect([...deployments.keys()].sort()).toEqual([
      'prod-mindgate-agents',
      'prod-mindgate-billing',
      'prod-mindgate-brain',
      'prod-mindgate-edge',
      'prod-mindgate-entity-graph',
    ]);
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
    expect(env('prod-mindgate-brain')).not.toHaveProperty('GATEWAY_STATE_SECRET');
    // One generated Secret holds both shared values, each long enough for its variable.
    const secret = docs.find((d) => d.kind === 'Secret' && d.metadata.name === 'prod-mindgate-internal');
    for (const key of ['INTERNAL_TOKEN', 'GATEWAY_STATE_SECRET']) {
      expect(Buffer.from(secret.data[key], 'base64').toString('utf8').length, key).toBeGreaterThanOrEqual(32);
    }
    // The key-encryption key: a generated Secret, mounted as a file into the edge pods only.
    const kek = docs.find((d) => d.kind === 'Secret' && d.metadata.name === 'prod-mindgate-key-encryption');
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
    expect(env('prod-mindgate-brain')).not.toHaveProperty('KEY_ENCRYPTION_KEY_FILE');
    expect(deployments.get('prod-mindgate-brain').spec.template.spec.volumes ?? []).toEqual([]);
    const services = docs
      .filter((d) => d.kind === 'Service')
      .map((d) => d.metadata.name)
      .sort();
    expect(services).toContain('prod-mindgate-brain');
  });

  it.skipIf(!helm)('mounts a given key-encryption Secret, and the previous one during a rotation', async () => {
    const { stdout } = await run(helm!, [
      'template',
      'prod',
      chart,
      '--set',
      'keyEncryption.existingSecret=kek-2',
      '--set',
      'keyEncryption.previousSecret=kek-1',
    ]);
    const docs = parseAllDocuments(stdout)
      .map((d) => d.toJSON())
      .filter(Boolean);
    expect(docs.find((d) => d.kind === 'Secret' && d.metadata.name === 'prod-mindgate-key-encryption')).toBeUndefined();
    const pod = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'prod-mindgate-edge').spec.template.spec;
    expect(pod.volumes.map((v: { secret: { secretName: string } }) => v.secret.secretName)).toEqual(['kek-2', 'kek-1']);
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
  });
});
