// The entity graph's behaviour over a records store: one suite, run against the embedded SQLite
// store and the MongoDB store (test/contract/entity-graph.test.ts), through the service's own
// routes and interceptors (an in-memory Connect transport) and its generated client.
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, createRouterTransport, type Client } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AliasListSchema,
  CitationOrigin,
  Direction,
  EntityGraphService,
  EntityKind,
  RelationshipInputSchema,
} from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { createLogger } from '../../services/common/log.ts';
import { createRpcRoutes, rpcRouterOptions } from '../../services/common/rpc/server.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import { createGraphContext, type GraphContext } from '../../services/entity-graph/context.ts';
import { graphRoutes } from '../../services/entity-graph/routes.ts';
import { INTERNAL_TOKEN_HEADER } from '../../services/common/rpc/context.ts';

export interface GraphStoreHarness {
  open(): Promise<RecordStore>;
  cleanup?(): Promise<void>;
}

export type GraphClient = Client<typeof EntityGraphService>;
const TOKEN = 'graph-contract-internal-token-0123456789';

export function graphClient(ctx: GraphContext): GraphClient {
  const module = { services: [EntityGraphService], routes: graphRoutes(ctx), probe: async () => true };
  const logger = createLogger({ level: 'silent' });
  const transport = createRouterTransport(createRpcRoutes({ module }), {
    transport: {
      interceptors: [
        (next) => (req) => {
          req.header.set(INTERNAL_TOKEN_HEADER, TOKEN);
          return next(req);
        },
      ],
    },
    router: rpcRouterOptions({ module, internalToken: TOKEN, logger }),
  });
  return createClient(EntityGraphService, transport);
}

async function code(promise: Promise<unknown>): Promise<{ code: Code; message: string }> {
  try {
    await promise;
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, message: e.rawMessage };
  }
  throw new Error('expected the call to fail');
}

const rel = (subject: string, predicate: string, object: string) => create(RelationshipInputSchema, { subject, predicate, object });
const triples = (rs: { subjectId: string; predicate: string; objectId: string }[]) =>
  rs.map((r) => `${r.subjectId} ${r.predicate} ${r.objectId}`).sort();

export function runEntityGraphContract(name: string, harness: GraphStoreHarness): void {
  describe(`entity graph contract: ${name}`, () => {
    let store: RecordStore;
    let ctx: GraphContext;
    let graph: GraphClient;
    let org = '';
    const newOrg = () => `org_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const sync = (
      key: string,
      version: number,
      content: string,
      extra: { entities?: string[]; relationships?: ReturnType<typeof rel>[]; organizationId?: string } = {},
    ) =>
      graph.syncMemory({
        organizationId: extra.organizationId ?? org,
        namespace: 'knowledge',
        key,
        version: BigInt(version),
        title: `title of ${key}`,
        content,
        entities: extra.entities ?? [],
        relationships: extra.relationships ?? [],
      });

    beforeAll(async () => {
      store = await harness.open();
      ctx = createGraphContext(store, createLogger({ level: 'silent' }));
      graph = graphClient(ctx);
    });
    afterAll(async () => {
      await store?.close();
      await harness.cleanup?.();
    });

    it('asserts what a memory says, explicitly and in its text, each relationship citing the memory', async () => {
      org = newOrg();
      const res = await sync('services/checkout', 1, 'Checkout depends on the Payments API. Checkout is owned by the web team.', {
        entities: ['Checkout', 'Payments API', 'web team'],
        relationships: [rel('Checkout', 'runs on', 'prod-eu')],
      });
      expect(triples(res.relationships)).toEqual([
        'checkout depends_on payments-api',
        'checkout owned_by web-team',
        'checkout runs_on prod-eu',
      ]);
      const explicit = res.relationships.find((r) => r.predicate === 'runs_on')!;
      expect(explicit.citations).toMatchObject([
        {
          namespace: 'knowledge',
          key: 'services/checkout',
          version: 1n,
          origin: CitationOrigin.EXPLICIT,
          title: 'title of services/checkout',
        },
      ]);
      expect(res.relationships.find((r) => r.predicate === 'depends_on')!.citations[0].origin).toBe(CitationOrigin.EXTRACTED);
      const team = await graph.getEntity({ organizationId: org, name: 'Web Team' });
      expect(team.entity).toMatchObject({ id: 'web-team', name: 'web team', entityKind: EntityKind.TEAM });
      expect(team.incoming.map((r) => r.subjectName)).toEqual(['Checkout']);
    });

    it('keeps a relationship while any memory asserts it, and retracts what an update or a deletion stops asserting', async () => {
      org = newOrg();
      await sync('a', 1, 'Orders depends on Inventory. Orders runs on k8s-prod.', { entities: ['Orders', 'Inventory', 'k8s-prod'] });
      await sync('b', 1, 'Orders depends on Inventory.', { entities: ['Orders', 'Inventory'] });
      const updated = await sync('a', 2, 'Orders runs on k8s-prod.', { entities: ['Orders', 'k8s-prod'] });
      expect(updated.retracted).toBe(1);
      let orders = await graph.getEntity({ organizationId: org, name: 'orders' });
      const depends = orders.outgoing.find((r) => r.predicate === 'depends_on')!;
      expect(depends.citations.map((c) => c.key)).toEqual(['b']);
      expect(orders.outgoing.find((r) => r.predicate === 'runs_on')!.citations[0].version).toBe(2n);

      expect((await graph.forgetMemory({ organizationId: org, namespace: 'knowledge', key: 'b' })).retracted).toBe(1);
      orders = await graph.getEntity({ organizationId: org, name: 'orders' });
      expect(triples(orders.outgoing)).toEqual(['orders runs_on k8s-prod']);
      const list = await graph.listRelationships({ organizationId: org, predicate: 'depends_on' });
      expect(list.relationships).toEqual([]);
      // Forgetting twice is harmless.
      expect((await graph.forgetMemory({ organizationId: org, namespace: 'knowledge', key: 'b' })).retracted).toBe(0);
    });

    it('ignores a sync of an older version than the one recorded', async () => {
      org = newOrg();
      await sync('m', 3, 'Ledger depends on Kafka.', { entities: ['Ledger', 'Kafka'] });
      const stale = await sync('m', 2, 'Ledger depends on Postgres.', { entities: ['Ledger', 'Postgres'] });
      expect(stale.stale).toBe(true);
      const ledger = await graph.getEntity({ organizationId: org, name: 'Ledger' });
      expect(triples(ledger.outgoing)).toEqual(['ledger depends_on kafka']);
    });

    it('finishes the retraction of a sync that was interrupted after recording what it touched', async () => {
      org = newOrg();
      await sync('m', 1, 'Cart depends on Redis.', { entities: ['Cart', 'Redis'] });
      const [edge] = (await graph.listRelationships({ organizationId: org })).relationships;
      // A crash between the two writes leaves the relationship cited by the memory and listed
      // only as touched (what syncAssertions records first).
      const id = `${org}/knowledge/m`;
      const doc = (await ctx.assertions.get(id))!;
      await ctx.assertions.put({ ...doc, items: [], touched: [edge.id], rev: doc.rev + 1 });
      const again = await sync('m', 2, 'Cart is fast.', { entities: ['Cart'] });
      expect(again.retracted).toBe(1);
      expect((await graph.listRelationships({ organizationId: org })).relationships).toEqual([]);
    });

    it('reports refused explicit relationships and stores the others', async () => {
      org = newOrg();
      const res = await sync('m', 1, 'no statements here', {
        relationships: [rel('A', '', 'B'), rel('A', 'depends on', 'B'), rel('', 'calls', 'B'), rel('X', '!!!', 'Y')],
        entities: [],
      });
      expect(triples(res.relationships)).toEqual(['a depends_on b']);
      expect(res.rejected).toEqual([
        'relationships[0].predicate: is required',
        'relationships[2].subject: is required',
        expect.stringMatching(/^relationships\[3\]\.predicate: must be 1-64 characters/),
      ]);
    });

    it('reads an entity by id, name or alias with neighbours both ways and their totals, and names the closest on a miss', async () => {
      org = newOrg();
      const names = ['Payments API', 'Checkout', 'Billing', 'Refunds', 'Ledger'];
      await sync('m1', 1, 'Checkout depends on Payments API. Billing depends on Payments API. Refunds depends on Payments API.', {
        entities: names,
      });
      await sync('m2', 1, 'Payments API depends on Ledger.', { entities: names });
      const byName = await graph.getEntity({ organizationId: org, name: '  payments   api ', neighbourLimit: 2 });
      expect(byName.entity?.id).toBe('payments-api');
      expect(byName.entity?.relationshipCount).toBe(4);
      expect(byName.incoming).toHaveLength(2);
      expect(byName.incomingTotal).toBe(3);
      expect(byName.outgoingTotal).toBe(1);
      expect((await graph.getEntity({ organizationId: org, entityId: 'payments-api' })).entity?.name).toBe('Payments API');
      const miss = await code(graph.getEntity({ organizationId: org, name: 'Paymnts API' }));
      expect(miss.code).toBe(Code.NotFound);
      expect(miss.message).toContain('"Payments API" (payments-api)');
    });

    it('searches names and aliases by prefix, word and near spelling, optionally of one kind', async () => {
      org = newOrg();
      await sync('m', 1, 'Checkout is owned by the web team. The payments gateway runs on prod-eu.', {
        entities: ['Checkout', 'web team', 'payments gateway', 'prod-eu'],
      });
      await graph.updateEntity({
        organizationId: org,
        entityId: 'payments-gateway',
        aliases: create(AliasListSchema, { values: ['PGW'] }),
      });
      const search = async (query: string, kind = EntityKind.UNSPECIFIED) =>
        (await graph.searchEntities({ organizationId: org, query, kind })).matches.map((m) => `${m.entity?.id}:${m.matched}`);
      expect(await search('checkout')).toEqual(['checkout:Checkout']);
      expect(await search('chekout')).toEqual(['checkout:Checkout']);
      expect(await search('pay')).toEqual(['payments-gateway:payments gateway']);
      expect(await search('gateway')).toEqual(['payments-gateway:payments gateway']);
      expect(await search('pgw')).toEqual(['payments-gateway:PGW']);
      expect(await search('web', EntityKind.TEAM)).toEqual(['web-team:web team']);
      expect(await search('web', EntityKind.PERSON)).toEqual([]);
    });

    it('finds the entities a text names by name or alias, the longest run first, each once, in order, capped', async () => {
      org = newOrg();
      // Only relationships name these entities: no memory lists them among its entities.
      await sync('m', 1, '', {
        relationships: [
          rel('Orders', 'depends_on', 'Inventory Service'),
          rel('Inventory Service', 'runs_on', 'k8s-eu'),
          rel('Payments API', 'calls', 'API'),
          rel('Checkout', 'depends_on', 'Payments API'),
        ],
      });
      await graph.updateEntity({
        organizationId: org,
        entityId: 'inventory-service',
        aliases: create(AliasListSchema, { values: ['IMS'] }),
      });
      const mentioned = async (text: string, limit = 0) =>
        (await graph.findMentionedEntities({ organizationId: org, text, limit })).mentions.map(
          (m) => `${m.entity?.id}:${m.matched}:${m.mention}`,
        );
      const task = 'Plan a maintenance window for the Inventory Service (IMS) on k8s-eu, and tell the Payments API’s callers. Checkout.';
      expect(await mentioned(task)).toEqual([
        'inventory-service:Inventory Service:Inventory Service',
        'k8s-eu:k8s-eu:k8s-eu',
        'payments-api:Payments API:Payments API',
        'checkout:Checkout:Checkout',
      ]);
      expect(await mentioned(task, 2)).toEqual(['inventory-service:Inventory Service:Inventory Service', 'k8s-eu:k8s-eu:k8s-eu']);
      expect(await mentioned('Can we restart  ims\ntonight?')).toEqual(['inventory-service:IMS:ims']);
      expect(await mentioned('Who calls the API?')).toEqual(['api:API:API']);
      // An id is not a name: "inventory-service" names nothing, nor do words that only start a name.
      expect(await mentioned('inventory-service is down; the inventory is low')).toEqual([]);
      const found = await graph.findMentionedEntities({ organizationId: org, text: 'orders' });
      expect(found.mentions[0].entity?.relationshipCount).toBe(1);
    });

    it('updates an entity under its version and refuses a name another entity holds', async () => {
      org = newOrg();
      await sync('m', 1, 'Search depends on Elasticsearch.', { entities: ['Search', 'Elasticsearch'] });
      const first = await graph.updateEntity({
        organizationId: org,
        entityId: 'elasticsearch',
        name: 'Elasticsearch cluster',
        kind: EntityKind.COMPONENT,
        aliases: create(AliasListSchema, { values: ['ES', 'elastic'] }),
        description: 'The search cluster',
        expectedVersion: 1n,
      });
      expect(first.entity).toMatchObject({
        id: 'elasticsearch',
        name: 'Elasticsearch cluster',
        kind: 'component',
        aliases: ['ES', 'elastic'],
        version: 2n,
      });
      expect((await graph.getEntity({ organizationId: org, name: 'es' })).entity?.id).toBe('elasticsearch');
      // The old name no longer resolves once it is neither the name nor an alias.
      expect((await code(graph.getEntity({ organizationId: org, name: 'Elasticsearch' }))).code).toBe(Code.NotFound);
      const stale = await code(
        graph.updateEntity({ organizationId: org, entityId: 'elasticsearch', description: 'x', expectedVersion: 1n }),
      );
      expect(stale.code).toBe(Code.FailedPrecondition);
      const taken = await code(
        graph.updateEntity({ organizationId: org, entityId: 'search', aliases: create(AliasListSchema, { values: ['es'] }) }),
      );
      expect(taken).toMatchObject({ code: Code.AlreadyExists });
      expect(taken.message).toContain('elasticsearch');
    });

    it('merges an entity into another: names, relationships and citations move, and a later update still retracts', async () => {
      org = newOrg();
      await sync('m1', 1, 'Checkout depends on payments.', { entities: ['Checkout', 'payments'] });
      await sync('m2', 1, 'Refunds depends on the Payments API.', { entities: ['Refunds', 'Payments API'] });
      const merged = await graph.mergeEntities({ organizationId: org, targetEntityId: 'payments-api', sourceEntityId: 'payments' });
      expect(merged.movedRelationships).toBe(1);
      expect(merged.entity?.aliases).toEqual(['payments']);
      const api = await graph.getEntity({ organizationId: org, name: 'payments' });
      expect(api.entity?.id).toBe('payments-api');
      expect(api.incoming.map((r) => `${r.subjectId}:${r.citations.map((c) => c.key)}`).sort()).toEqual(['checkout:m1', 'refunds:m2']);
      expect((await graph.getEntity({ organizationId: org, entityId: 'payments' })).entity?.id).toBe('payments-api');
      await sync('m1', 2, 'Checkout is fast.', { entities: ['Checkout'] });
      const after = await graph.getEntity({ organizationId: org, entityId: 'payments-api' });
      expect(after.incoming.map((r) => r.subjectId)).toEqual(['refunds']);
    });

    it('pages entities and relationships without repeats and filters relationships', async () => {
      org = newOrg();
      await sync('m1', 1, 'A1 calls B1. A2 calls B2.', { entities: ['A1', 'B1', 'A2', 'B2'] });
      await sync('m2', 1, 'A3 runs on B3.', { entities: ['A3', 'B3'] });
      const seen: string[] = [];
      let token = '';
      do {
        const page = await graph.listEntities({ organizationId: org, pageSize: 2, pageToken: token });
        seen.push(...page.entities.map((e) => e.id));
        token = page.nextPageToken;
      } while (token);
      expect(seen.sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
      expect(triples((await graph.listRelationships({ organizationId: org, predicate: 'calls' })).relationships)).toEqual([
        'a1 calls b1',
        'a2 calls b2',
      ]);
      expect(triples((await graph.listRelationships({ organizationId: org, subjectId: 'a3' })).relationships)).toEqual(['a3 runs_on b3']);
      expect(
        triples((await graph.listRelationships({ organizationId: org, memoryNamespace: 'knowledge', memoryKey: 'm2' })).relationships),
      ).toEqual(['a3 runs_on b3']);
      const first = await graph.listRelationships({ organizationId: org, pageSize: 1 });
      expect((await code(graph.listRelationships({ organizationId: org, predicate: 'calls', pageToken: first.nextPageToken }))).code).toBe(
        Code.InvalidArgument,
      );
    });

    it('finds up to k shortest paths, bounded by depth, filtered by predicate and direction', async () => {
      org = newOrg();
      // web → api → db, web → cache → db, web → queue → worker → db
      await sync('m', 1, '', {
        relationships: [
          rel('web', 'calls', 'api'),
          rel('api', 'depends_on', 'db'),
          rel('web', 'depends_on', 'cache'),
          rel('cache', 'depends_on', 'db'),
          rel('web', 'calls', 'queue'),
          rel('queue', 'calls', 'worker'),
          rel('worker', 'stores_data_in', 'db'),
        ],
      });
      const paths = await graph.findPaths({ organizationId: org, from: 'web', to: 'db', maxPaths: 3 });
      expect(paths.paths.map((p) => p.entityIds.join('>'))).toEqual(['web>api>db', 'web>cache>db', 'web>queue>worker>db']);
      expect(paths.paths[0].steps[0].relationship?.citations[0]).toMatchObject({ key: 'm', origin: CitationOrigin.EXPLICIT });
      const short = await graph.findPaths({ organizationId: org, from: 'web', to: 'db', maxPaths: 5, maxDepth: 2 });
      expect(short.paths).toHaveLength(2);
      const onlyCalls = await graph.findPaths({ organizationId: org, from: 'web', to: 'worker', predicates: ['calls'] });
      expect(onlyCalls.paths.map((p) => p.entityIds.join('>'))).toEqual(['web>queue>worker']);
      const backwards = await graph.findPaths({ organizationId: org, from: 'db', to: 'web', maxPaths: 1 });
      expect(backwards.paths[0].steps.every((s) => s.reversed)).toBe(true);
      expect((await graph.findPaths({ organizationId: org, from: 'db', to: 'web', direction: Direction.FORWARD })).paths).toEqual([]);
    });

    it('lists what a failure affects with depth and path, and what an entity relies on', async () => {
      org = newOrg();
      await sync('m', 1, '', {
        relationships: [
          rel('checkout', 'depends_on', 'payments'),
          rel('payments', 'runs_on', 'cluster'),
          rel('reports', 'stores_data_in', 'cluster'),
          rel('tokenizer', 'part_of', 'payments'),
          rel('payments', 'owned_by', 'team'),
          rel('storefront', 'calls', 'checkout'),
        ],
      });
      const impact = await graph.getAffectedEntities({ organizationId: org, entity: 'cluster' });
      const rows = impact.affected.map((a) => `${a.entity?.id}@${a.depth}:${a.path.map((s) => s.relationship?.predicate).join('/')}`);
      expect(rows).toEqual([
        'payments@1:runs_on',
        'reports@1:stores_data_in',
        'checkout@2:runs_on/depends_on',
        'storefront@3:runs_on/depends_on/calls',
      ]);
      expect(impact.affected[0].path[0]).toMatchObject({ reversed: true });
      // A part failing degrades the whole; ownership carries no failure.
      const part = await graph.getAffectedEntities({ organizationId: org, entity: 'tokenizer', maxDepth: 1 });
      expect(part.affected.map((a) => a.entity?.id)).toEqual(['payments']);
      const deps = await graph.getAffectedEntities({ organizationId: org, entity: 'checkout', direction: Direction.DEPENDENCIES });
      expect(deps.affected.map((a) => a.entity?.id)).toEqual(['payments', 'cluster', 'tokenizer']);
      const cut = await graph.getAffectedEntities({ organizationId: org, entity: 'cluster', limit: 2 });
      expect(cut).toMatchObject({ truncated: true });
      expect(cut.affected).toHaveLength(2);
      const custom = await graph.getAffectedEntities({ organizationId: org, entity: 'team', predicates: ['owned_by'] });
      expect(custom.affected.map((a) => a.entity?.id)).toEqual(['payments']);
    });

    it('keeps a relationship asserted by hand through syncs of its memory, and retracts it by memory or whole', async () => {
      org = newOrg();
      await sync('m', 1, 'Nothing to see.', {});
      const asserted = await graph.assertRelationship({
        organizationId: org,
        subject: 'Mailer',
        predicate: 'depends on',
        object: 'SendGrid',
        memoryNamespace: 'knowledge',
        memoryKey: 'm',
        memoryVersion: 1n,
      });
      expect(asserted.relationship?.citations[0].origin).toBe(CitationOrigin.MANUAL);
      await sync('m', 2, 'Still nothing.', {});
      expect((await graph.listRelationships({ organizationId: org })).relationships).toHaveLength(1);
      await graph.assertRelationship({
        organizationId: org,
        subject: 'Mailer',
        predicate: 'depends_on',
        object: 'SendGrid',
        memoryNamespace: 'episodes',
        memoryKey: 'e',
      });
      const one = await graph.retractRelationship({
        organizationId: org,
        relationshipId: asserted.relationship!.id,
        memoryNamespace: 'knowledge',
        memoryKey: 'm',
      });
      expect(one.removed).toBe(false);
      expect(one.relationship?.citations.map((c) => c.key)).toEqual(['e']);
      const all = await graph.retractRelationship({ organizationId: org, relationshipId: asserted.relationship!.id });
      expect(all.removed).toBe(true);
      expect((await code(graph.retractRelationship({ organizationId: org, relationshipId: asserted.relationship!.id }))).code).toBe(
        Code.NotFound,
      );
    });

    it('keeps organizations apart', async () => {
      const a = newOrg();
      const b = newOrg();
      await sync('m', 1, 'Checkout depends on Payments API.', { entities: ['Checkout', 'Payments API'], organizationId: a });
      expect((await code(graph.getEntity({ organizationId: b, name: 'Checkout' }))).code).toBe(Code.NotFound);
      expect((await graph.listEntities({ organizationId: b })).entities).toEqual([]);
      expect((await graph.listRelationships({ organizationId: b })).relationships).toEqual([]);
      expect((await graph.searchEntities({ organizationId: b, query: 'checkout' })).matches).toEqual([]);
      expect((await graph.findMentionedEntities({ organizationId: b, text: 'Checkout and Payments API' })).mentions).toEqual([]);
      expect((await code(graph.findPaths({ organizationId: b, from: 'Checkout', to: 'Payments API' }))).code).toBe(Code.NotFound);
      expect((await code(graph.getAffectedEntities({ organizationId: b, entity: 'Payments API' }))).code).toBe(Code.NotFound);
      const [edge] = (await graph.listRelationships({ organizationId: a })).relationships;
      expect((await code(graph.retractRelationship({ organizationId: b, relationshipId: edge.id }))).code).toBe(Code.NotFound);
      expect(
        (await code(graph.mergeEntities({ organizationId: b, targetEntityId: 'checkout', sourceEntityId: 'payments-api' }))).code,
      ).toBe(Code.NotFound);
      expect((await code(graph.updateEntity({ organizationId: b, entityId: 'checkout', description: 'x' }))).code).toBe(Code.NotFound);
      expect((await graph.forgetMemory({ organizationId: b, namespace: 'knowledge', key: 'm' })).retracted).toBe(0);
      expect((await graph.listRelationships({ organizationId: a })).relationships).toHaveLength(1);
    });

    it('shows another replica writes made through a second service over the same store', async () => {
      org = newOrg();
      const other = graphClient(createGraphContext(store, createLogger({ level: 'silent' })));
      await sync('m', 1, 'Checkout depends on Cart.', { entities: ['Checkout', 'Cart'] });
      expect((await other.getEntity({ organizationId: org, name: 'Checkout' })).outgoing).toHaveLength(1);
      await other.syncMemory({
        organizationId: org,
        namespace: 'knowledge',
        key: 'm',
        version: 2n,
        title: '',
        content: 'Checkout runs on k8s.',
        entities: ['Checkout', 'k8s'],
        relationships: [],
      });
      const seen = await graph.getEntity({ organizationId: org, name: 'Checkout' });
      expect(triples(seen.outgoing)).toEqual(['checkout runs_on k8s']);
      await other.mergeEntities({ organizationId: org, targetEntityId: 'k8s', sourceEntityId: 'cart' });
      expect((await graph.getEntity({ organizationId: org, name: 'cart' })).entity?.id).toBe('k8s');
    });

    it('answers walks with the citations as another replica last changed them', async () => {
      org = newOrg();
      const other = graphClient(createGraphContext(store, createLogger({ level: 'silent' })));
      await sync('a', 1, '', { relationships: [rel('checkout', 'depends_on', 'payments'), rel('payments', 'runs_on', 'cluster')] });
      const citing = async () => {
        const impact = await graph.getAffectedEntities({ organizationId: org, entity: 'cluster' });
        const paths = await graph.findPaths({ organizationId: org, from: 'checkout', to: 'cluster' });
        const entity = await graph.getEntity({ organizationId: org, entityId: 'payments' });
        return {
          impact: impact.affected.map((a) => a.path.map((s) => s.relationship!.citations.map((c) => `${c.key}v${c.version}`).join('+'))),
          paths: paths.paths[0].steps.map((s) => s.relationship!.citationCount),
          entity: entity.outgoing.map((r) => [...r.memoryKeys].sort().join('+')),
        };
      };
      expect(await citing()).toEqual({ impact: [['av1'], ['av1', 'av1']], paths: [1, 1], entity: ['a'] });
      // This replica holds the graph now; the other adds a citation, then changes the first memory.
      await other.syncMemory({
        organizationId: org,
        namespace: 'knowledge',
        key: 'b',
        version: 1n,
        title: 'b',
        content: '',
        entities: [],
        relationships: [rel('payments', 'runs_on', 'cluster')],
      });
      await other.syncMemory({
        organizationId: org,
        namespace: 'knowledge',
        key: 'a',
        version: 2n,
        title: 'a',
        content: '',
        entities: [],
        relationships: [rel('checkout', 'depends_on', 'payments'), rel('payments', 'runs_on', 'cluster')],
      });
      const seen = await citing();
      expect(seen.impact.map((path) => path.map((keys) => keys.split('+').sort().join('+')))).toEqual([['av2+bv1'], ['av2+bv1', 'av2']]);
      expect(seen.paths).toEqual([1, 2]);
      expect(seen.entity).toEqual(['a+b']);
    });

    it('answers malformed input with INVALID_ARGUMENT naming the field', async () => {
      const bad = [
        [graph.syncMemory({ organizationId: 'bad org', namespace: 'knowledge', key: 'k', version: 1n }), 'organization_id'],
        [graph.syncMemory({ organizationId: 'o', namespace: 'notes', key: 'k', version: 1n }), 'namespace'],
        [graph.syncMemory({ organizationId: 'o', namespace: 'knowledge', key: 'bad key', version: 1n }), 'key'],
        [graph.syncMemory({ organizationId: 'o', namespace: 'knowledge', key: 'k', version: 0n }), 'version'],
        [graph.getEntity({ organizationId: 'o' }), 'name'],
        [graph.getEntity({ organizationId: 'o', name: 'x', neighbourLimit: 501 }), 'neighbour_limit'],
        [graph.findPaths({ organizationId: 'o', from: 'a', to: 'b', maxDepth: 7 }), 'max_depth'],
        [graph.findPaths({ organizationId: 'o', from: 'a', to: 'b', direction: Direction.IMPACT }), 'direction'],
        [graph.getAffectedEntities({ organizationId: 'o', entity: 'a', limit: 501 }), 'limit'],
        [graph.getAffectedEntities({ organizationId: 'o', entity: 'a', predicates: ['?'] }), 'predicates[0]'],
        [graph.searchEntities({ organizationId: 'o', query: '' }), 'query'],
        [graph.findMentionedEntities({ organizationId: 'o', text: ' ' }), 'text'],
        [graph.findMentionedEntities({ organizationId: 'o', text: 'x'.repeat(10_001) }), 'text'],
        [graph.findMentionedEntities({ organizationId: 'o', text: 'x', limit: 21 }), 'limit'],
        [graph.findMentionedEntities({ organizationId: 'bad org', text: 'x' }), 'organization_id'],
        [graph.listEntities({ organizationId: 'o', pageSize: 101 }), 'page_size'],
        [graph.updateEntity({ organizationId: 'o', entityId: 'Bad Id' }), 'entity_id'],
        [graph.mergeEntities({ organizationId: 'o', targetEntityId: 'a', sourceEntityId: 'a' }), 'source_entity_id'],
        [graph.retractRelationship({ organizationId: 'o', relationshipId: 'x' }), 'relationship_id'],
        [graph.assertRelationship({ organizationId: 'o', subject: 'a', predicate: 'calls', object: 'b', memoryKey: '' }), 'memory_key'],
      ] as const;
      for (const [call, field] of bad) {
        const failure = await code(call);
        expect(failure.code, field).toBe(Code.InvalidArgument);
        expect(failure.message.startsWith(`${field}:`), failure.message).toBe(true);
      }
    });
  });
}
