// Supersession and the life of contradictions through the brain service's RPCs: a write that
// names the memory it corrects keeps that one as history, ranked below it, and settles their
// contradiction; deleting a memory makes its contradictions obsolete, and deleting a successor
// makes what it superseded current again. Through the edge's typed client.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrainService, ItemStatus, MemoryRefSchema, Namespace, WriteOutcome } from '../../gen/mindgate/brain/v1/brain_pb.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.ts';

let platform: TestPlatform;
let brain: Client<typeof BrainService>;
const org = 'org-supersede';
const K = Namespace.KNOWLEDGE;
const ref = (key: string, namespace = K) => create(MemoryRefSchema, { namespace, key });
const source = { clientId: 'c-1', userId: 'u-1', clientName: 'Runbook bot', userName: 'Dana' };

async function codeOf(p: Promise<unknown>): Promise<Code | undefined> {
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  return err instanceof ConnectError ? err.code : undefined;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  brain = platform.ctx.clients.brain;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

describe('supersedes', () => {
  it('keeps the old memory as history, ranks it below its successor and resolves their contradiction', async () => {
    await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'dns/ttl',
      content: 'The DNS TTL of the API record is 300 seconds.',
      source,
    });
    const flagged = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'dns/ttl-new',
      content: 'The DNS TTL of the API record is 60 seconds.',
      source,
    });
    expect(flagged.outcome).toBe(WriteOutcome.CREATED);
    const [ctr] = flagged.contradictions;
    expect(ctr.status).toBe(ItemStatus.OPEN);
    // An unrelated open contradiction of the old memory: superseding makes it obsolete.
    await brain.putMemory({ organizationId: org, namespace: K, key: 'dns/other', content: 'Unrelated note about mail.', source });
    const other = await brain.flagContradiction({
      organizationId: org,
      memories: [ref('dns/ttl'), ref('dns/other')],
      reason: 'test',
      source,
    });

    const fixed = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'dns/ttl-new',
      expectedVersion: 1n,
      content: 'The DNS TTL of the API record is 60 seconds since the failover drill.',
      supersedes: ref('dns/ttl'),
      source,
    });
    expect(fixed.outcome).toBe(WriteOutcome.UPDATED);
    expect(fixed.memory?.supersedes?.key).toBe('dns/ttl');
    const closed = new Map(fixed.closedContradictions.map((c) => [c.id, c]));
    expect(closed.get(ctr.id)).toMatchObject({ status: ItemStatus.RESOLVED, resolvedBy: { clientName: 'Runbook bot', userName: 'Dana' } });
    expect(closed.get(ctr.id)!.resolution).toContain('knowledge/dns/ttl was superseded by knowledge/dns/ttl-new');
    expect(closed.get(other.contradiction!.id)?.status).toBe(ItemStatus.OBSOLETE);

    const old = await brain.getMemories({ organizationId: org, namespace: K, keys: ['dns/ttl'] });
    expect(old.memories[0].supersededBy?.key).toBe('dns/ttl-new');
    expect(old.memories[0].version).toBe(1n);
    const found = await brain.searchMemories({ organizationId: org, namespace: K, query: 'DNS TTL of the API record seconds' });
    const keys = found.results.map((r) => r.memory!.key);
    expect(keys.indexOf('dns/ttl-new')).toBeLessThan(keys.indexOf('dns/ttl'));
    const obsolete = await brain.listContradictions({ organizationId: org, status: ItemStatus.OBSOLETE });
    expect(obsolete.contradictions.map((c) => c.id)).toContain(other.contradiction!.id);
    // Seven writes, each embedded: slow on a loaded machine.
  }, 120_000);

  it('makes the superseded memory current again when its successor is deleted', async () => {
    await brain.deleteMemory({ organizationId: org, namespace: K, key: 'dns/ttl-new', source });
    const old = await brain.getMemories({ organizationId: org, namespace: K, keys: ['dns/ttl'] });
    expect(old.memories[0].supersededBy).toBeUndefined();
  });

  it('refuses a missing, malformed or self supersedes', async () => {
    const put = (supersedes: ReturnType<typeof ref>, key = 'dns/x') =>
      brain.putMemory({ organizationId: org, namespace: K, key, content: 'x', supersedes });
    expect(await codeOf(put(ref('never/was')))).toBe(Code.NotFound);
    expect(await codeOf(put(ref('dns/x')))).toBe(Code.InvalidArgument);
    expect(await codeOf(put(ref('bad key!')))).toBe(Code.InvalidArgument);
    expect(await codeOf(put(ref('dns/ttl', Namespace.UNSPECIFIED)))).toBe(Code.InvalidArgument);
  });
});

describe('contradictions closed by deletion', () => {
  it('closes the open contradictions of a deleted memory as OBSOLETE, naming who deleted it', async () => {
    await brain.putMemory({ organizationId: org, namespace: K, key: 'vpn/port', content: 'The VPN listens on port 1194.', source });
    const flagged = await brain.putMemory({
      organizationId: org,
      namespace: K,
      key: 'vpn/port-2',
      content: 'The VPN listens on port 51820.',
      source,
    });
    const id = flagged.contradictions[0].id;
    await brain.deleteMemory({ organizationId: org, namespace: K, key: 'vpn/port-2', source });
    const [closed] = (await brain.listContradictions({ organizationId: org, ids: [id] })).contradictions;
    expect(closed).toMatchObject({
      status: ItemStatus.OBSOLETE,
      resolution: 'knowledge/vpn/port-2 was deleted',
      resolvedBy: { clientName: 'Runbook bot' },
    });
    // A closed contradiction cannot be resolved again.
    expect(await codeOf(brain.resolveContradiction({ organizationId: org, id, status: ItemStatus.RESOLVED, resolution: 'x' }))).toBe(
      Code.FailedPrecondition,
    );
    const found = await brain.searchMemories({ organizationId: org, namespace: K, query: 'VPN listens on port' });
    expect(found.results.find((r) => r.memory!.key === 'vpn/port')?.openContradictions).toEqual([]);
  });
});
