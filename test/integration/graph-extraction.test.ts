// The relationship extractors: the model-free patterns held to floors on the labeled sentences
// (figures in docs/graph.md, from test/bench/graph-extraction.bench.ts), and the optional model
// extractor against a scripted HTTP server that speaks the chat-completions wire protocol.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CitationOrigin } from '../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { createLogger } from '../../services/common/log.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { createGraphContext } from '../../services/entity-graph/context.ts';
import { createExtractor } from '../../services/entity-graph/extractor/index.ts';
import { chatEndpoint, createChatExtractor } from '../../services/entity-graph/extractor/openai-chat.ts';
import { createPatternExtractor, extractPatterns } from '../../services/entity-graph/extractor/patterns.ts';
import { graphClient } from '../contract/entity-graph.contract.ts';
import { loadLabeledSentences, scoreExtractor } from '../support/graph-extraction-eval.ts';

describe('pattern extractor on the labeled sentences', () => {
  it('has at least 150 labeled sentences, and holds its precision and recall floors', async () => {
    const tuning = loadLabeledSentences();
    expect(tuning.length).toBeGreaterThanOrEqual(150);
    const score = await scoreExtractor(createPatternExtractor(), tuning);
    expect(score.precision).toBeGreaterThanOrEqual(0.95);
    expect(score.recall).toBeGreaterThanOrEqual(0.9);
    // The held-out set was never used to tune the patterns: it says how they do on new wording.
    const heldOut = await scoreExtractor(createPatternExtractor(), loadLabeledSentences('graph-extraction-heldout.jsonl'));
    expect(heldOut.precision).toBeGreaterThanOrEqual(0.9);
    expect(heldOut.recall).toBeGreaterThanOrEqual(0.9);
  });

  it('asserts nothing for negated, hedged or questioned statements', () => {
    for (const text of [
      'Search does not depend on Redis.',
      'Should Orders call Inventory?',
      'Checkout no longer depends on Cart.',
      'Check whether Ledger runs on prod-eu.',
    ]) {
      expect(extractPatterns({ text, entities: [] }), text).toEqual([]);
    }
  });
});

interface Scripted {
  status?: number;
  content?: string;
  delayMs?: number;
}

describe('model extractor over an OpenAI-compatible chat endpoint', () => {
  let server: http.Server;
  let base = '';
  const requests: { url: string; auth?: string; body: Record<string, unknown> }[] = [];
  let next: Scripted = {};

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        requests.push({ url: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(raw) });
        const answer = () => {
          res.writeHead(next.status ?? 200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'chatcmpl-1',
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: next.content ?? '{}' }, finish_reason: 'stop' }],
            }),
          );
        };
        if (next.delayMs) setTimeout(answer, next.delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('places requests on /v1/chat/completions by the endpoint rule', () => {
    expect(chatEndpoint('http://h:1')).toBe('http://h:1/v1/chat/completions');
    expect(chatEndpoint('http://h:1/v1/')).toBe('http://h:1/v1/chat/completions');
    expect(chatEndpoint('http://h:1/openai/deployments/x/chat/completions')).toBe('http://h:1/openai/deployments/x/chat/completions');
  });

  it('sends the text and entities in JSON mode and keeps only well-formed relationships', async () => {
    next = {
      content: JSON.stringify({
        relationships: [
          { subject: 'Checkout', predicate: 'Depends On', object: 'Payments API', subject_kind: 'service' },
          { subject: 'Checkout', predicate: '', object: 'x' },
          { subject: 'A', predicate: 'calls', object: 'a' },
          { subject: 42, predicate: 'calls', object: 'B' },
        ],
      }),
    };
    const extractor = createChatExtractor({ url: base, model: 'test-model', apiKey: 'sk-test' });
    const found = await extractor.extract({ text: 'Checkout needs payments', entities: ['Checkout'] });
    expect(found).toMatchObject([
      { subject: 'Checkout', predicate: 'depends_on', object: 'Payments API', subjectKind: 'service', origin: CitationOrigin.MODEL },
    ]);
    const sent = requests.at(-1)!;
    expect(sent.url).toBe('/v1/chat/completions');
    expect(sent.auth).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({ model: 'test-model', temperature: 0, response_format: { type: 'json_object' } });
    expect(JSON.parse((sent.body.messages as { content: string }[])[1].content)).toEqual({
      entities: ['Checkout'],
      text: 'Checkout needs payments',
    });
  });

  it('adds what the model finds to what the patterns find, and keeps the patterns when the model fails or is slow', async () => {
    const store = createSqliteRecordStore({ path: ':memory:', sweepIntervalMs: 0 });
    const logger = createLogger({ level: 'silent' });
    const extractor = createExtractor({ extractor: { url: `${base}/v1`, model: 'm', timeoutMs: 300 } }, logger);
    const graph = graphClient(createGraphContext(store, logger, { extractor }));
    const sync = (key: string) =>
      graph.syncMemory({
        organizationId: 'org_x',
        namespace: 'knowledge',
        key,
        version: 1n,
        title: '',
        content: 'Checkout depends on Cart.',
        entities: ['Checkout', 'Cart'],
      });
    next = { content: JSON.stringify({ relationships: [{ subject: 'Checkout', predicate: 'owned_by', object: 'web team' }] }) };
    const both = await sync('a');
    expect(both.relationships.map((r) => `${r.predicate}:${r.citations[0].origin}`).sort()).toEqual([
      `depends_on:${CitationOrigin.EXTRACTED}`,
      `owned_by:${CitationOrigin.MODEL}`,
    ]);
    next = { status: 500 };
    expect((await sync('b')).relationships.map((r) => r.predicate)).toEqual(['depends_on']);
    next = { delayMs: 2_000, content: '{"relationships":[]}' };
    expect((await sync('c')).relationships.map((r) => r.predicate)).toEqual(['depends_on']);
    next = { content: 'not json' };
    expect((await sync('d')).relationships.map((r) => r.predicate)).toEqual(['depends_on']);
    await store.close();
  });
});
