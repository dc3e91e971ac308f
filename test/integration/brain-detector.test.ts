// The model-free parts of the brain as plain units: the contradiction rule, the BM25 index and
// the ranking formula.
import { describe, expect, it } from 'vitest';
import { analyze, compareMemories, detectDisagreement, textOverlap, wordSet } from '../../services/brain/contradiction-detector.ts';
import type { MemoryRecord } from '../../services/brain/memory-record.ts';
import { IndexRegistry, type SequenceDoc } from '../../services/brain/search/index-registry.ts';
import { LexicalIndex } from '../../services/brain/search/lexical-index.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import { failureWarning, feedbackScore, fuse } from '../../services/brain/search/ranking.ts';
import { contentHash, stem } from '../../services/brain/text.ts';

describe('contradiction detector', () => {
  it.each([
    ['negation', 'Deploys run on Fridays after the standup.', "Deploys don't run on Fridays after the standup."],
    ['negation', 'The staging cluster uses spot instances.', 'The staging cluster never uses spot instances.'],
    ['opposite', 'Two-factor login is required for contractors.', 'Two-factor login is optional for contractors.'],
    ['opposite', 'Public signup is enabled on the EU instance.', 'Public signup is disabled on the EU instance.'],
    ['number', 'The API rate limit is 600 requests per minute.', 'The API rate limit is 1200 requests per minute.'],
    ['number', 'Backups are kept for 30 days.', 'Backups are kept for 90 days.'],
  ])('flags %s: "%s" vs "%s"', (rule, a, b) => {
    expect(detectDisagreement(a, b)?.rule).toBe(rule);
    expect(detectDisagreement(b, a)?.rule).toBe(rule);
  });

  it.each([
    ['agreeing paraphrase', 'Backups are kept for 30 days.', 'We keep backups for 30 days.'],
    ['unrelated sentences with numbers', 'The office opens at 9.', 'The API rate limit is 600 requests per minute.'],
    ['negations on both sides', 'Never deploy on Fridays.', 'Do not deploy on Fridays.'],
    ['too little in common', 'It is not ready.', 'It is ready.'],
    [
      'sentences that differ in more than the claim',
      'The rate limit is 600 requests per minute for free accounts created before the migration.',
      'The rate limit is 1200 requests per minute.',
    ],
  ])('does not flag %s', (_name, a, b) => {
    expect(detectDisagreement(a, b)).toBeUndefined();
  });

  it('aligns sentences inside longer memories and quotes them', () => {
    const a = 'Release checklist. Tag the commit. The canary phase lasts 15 minutes. Announce in #releases.';
    const b = 'Our releases: the canary phase lasts 30 minutes, then traffic shifts.';
    const found = detectDisagreement(a, b);
    expect(found?.rule).toBe('number');
    expect(found?.reason).toContain('15 minutes');
  });

  it('measures duplicates on normalized words, stemmed by Porter2', () => {
    expect(contentHash('Hello,  World!')).toBe(contentHash('hello world'));
    expect(textOverlap('Install the VPN client.', 'install the vpn client')).toBe(1);
    expect(stem('deploying')).toBe(stem('deployed'));
    expect(stem('deploys')).toBe('deploy');
    expect(stem('moved')).toBe(stem('move'));
  });

  it.each([
    ['number words', 'number', 'The API runs two replicas in production.', 'The API runs three replicas in production.'],
    ['numbers with other units', 'number', 'My sister lives 20 minutes from my place.', 'My sister lives 2 hours from my place.'],
    ['months', 'date', 'The migration finished in May.', 'The migration finished in June.'],
    ['identifiers after the subject', 'value', 'Billing moved to eu-west-1.', 'Billing moved to eu-central-1.'],
    ['"did not move" and "moved"', 'negation', 'Billing did not move to eu-west-1.', 'Billing moved to eu-west-1.'],
    ['opposites by stem', 'opposite', 'The smoke tests passed after the hotfix.', 'The smoke tests failed after the hotfix.'],
  ])('flags %s', (_name, rule, a, b) => {
    expect(detectDisagreement(a, b)?.rule).toBe(rule);
    expect(detectDisagreement(b, a)?.rule).toBe(rule);
  });

  it.each([
    ['goodbyes of two speakers', 'Caroline: Bye Mel, talk soon!', 'Melanie: Bye Caroline, talk soon!'],
    [
      'the same greeting on two days',
      '[8 May 2023] Caroline: Hey Mel! Good to see you!',
      '[25 May 2023] Caroline: Hey Mel! Good to see you!',
    ],
    ['two speakers with two opinions', 'Gina: Ha, I love that!', 'Jon: Ha, I hate that!'],
    ['different subjects with the same verb', 'The billing service listens on port 8080.', 'The search service listens on port 9090.'],
    ['a double negation', 'The cron scheduler is not enabled at night.', 'The cron scheduler is disabled at night.'],
    ['an added value', 'The API listens on port 443.', 'The API listens on port 443 and on port 80 for redirects.'],
    [
      'subjects named before the claim',
      'Caroline went to the pride parade last Saturday.',
      'Melanie went to the pride parade last Saturday.',
    ],
    ['values both memories already mention', 'I talked to Melanie about the adoption.', 'I talked to Caroline about the adoption.'],
  ])('does not flag %s', (_name, a, b) => {
    const entities = ['Caroline', 'Melanie'];
    expect(detectDisagreement(a, b, { entitiesA: entities, entitiesB: entities })).toBeUndefined();
  });

  it('takes a date for another occasion in episodes, and for a correction in knowledge', () => {
    const [a, b] = ['The nightly backup failed on Monday.', 'The nightly backup failed on Thursday.'];
    expect(detectDisagreement(a, b)?.rule).toBe('date');
    expect(detectDisagreement(a, b, { episodes: true })).toBeUndefined();
  });

  it('calls duplicates only what says the same thing, and an episode only on the same occasion', () => {
    const memory = (text: string, tags: string[] = []) => ({
      text,
      claims: analyze(text),
      words: wordSet(text),
      hash: contentHash(text),
      tags,
      entities: [],
    });
    const base = memory('The API runs two replicas in production behind the load balancer.');
    expect(compareMemories(memory('the API runs two replicas in production behind the load balancer'), base).duplicate).toBe('exact');
    expect(
      compareMemories(memory('The API runs two replicas in production, behind the load balancer, always.'), base).duplicate,
    ).toBeUndefined();
    const changed = compareMemories(memory('The API runs three replicas in production behind the load balancer.'), base);
    expect(changed.duplicate).toBeUndefined();
    expect(changed.disagreement?.rule).toBe('number');
    const greeting = memory('Caroline: Hey Mel!', ['session-1']);
    expect(compareMemories(memory('Caroline: Hey Mel!', ['session-2']), greeting, { episodes: true }).duplicate).toBeUndefined();
    expect(compareMemories(memory('Caroline: Hey Mel!', ['session-1']), greeting, { episodes: true }).duplicate).toBe('exact');
  });
});

describe('lexical index', () => {
  const doc = (key: string, content: string, extra: Partial<{ tags: string[]; entities: string[]; updatedAt: number }> = {}) => ({
    key,
    title: '',
    content,
    tags: extra.tags ?? [],
    entities: extra.entities ?? [],
    updatedAt: extra.updatedAt ?? 1,
    seq: 1,
    contentHash: contentHash(content),
  });

  it('ranks by BM25 and filters', () => {
    const index = new LexicalIndex();
    index.upsert(doc('a', 'postgres replication lag alarm', { tags: ['db'], entities: ['Postgres'] }));
    index.upsert(doc('b', 'postgres backup schedule', { updatedAt: 5 }));
    index.upsert(doc('c', 'kafka consumer lag'));
    expect(index.search('replication lag', 3).map((h) => h.key)).toEqual(['a', 'c']);
    expect(index.search('postgres', 3, { tags: ['db'] }).map((h) => h.key)).toEqual(['a']);
    expect(index.search('postgres', 3, { updatedAfter: 2 }).map((h) => h.key)).toEqual(['b']);
    expect(index.search('postgres', 3, { entities: ['POSTGRES'] }).map((h) => h.key)).toEqual(['a']);
    expect(index.keysForEntity('postgres')).toEqual(['a']);
    expect(index.scorer('lag')('a')).toBeGreaterThan(0);
  });

  it('stays correct through updates, deletions and compaction', () => {
    const index = new LexicalIndex();
    for (let i = 0; i < 3_000; i++) index.upsert(doc(`k${i}`, `common word${i}`));
    for (let i = 0; i < 2_000; i++) index.remove(`k${i}`);
    index.upsert(doc('k2500', 'replaced text'));
    expect(index.size).toBe(1_000);
    expect(index.search('word10', 5)).toEqual([]);
    expect(index.search('word2999', 5).map((h) => h.key)).toEqual(['k2999']);
    expect(index.search('word2500', 5)).toEqual([]);
    expect(index.search('replaced', 5).map((h) => h.key)).toEqual(['k2500']);
    expect(index.search('common', 2_000)).toHaveLength(999);
  });
});

describe('ranking', () => {
  it('scores feedback between -1 and 1, failures recent weigh most', () => {
    const now = Date.UTC(2026, 10, 22);
    expect(feedbackScore({ worked: 0, failed: 0 }, now)).toBe(0);
    expect(feedbackScore({ worked: 10, failed: 0 }, now)).toBeGreaterThan(0.5);
    const recent = feedbackScore({ worked: 3, failed: 1, lastFailedAt: now - 3600_000 }, now);
    const old = feedbackScore({ worked: 3, failed: 1, lastFailedAt: now - 200 * 86_400_000 }, now);
    expect(recent).toBeLessThan(old);
    expect(failureWarning({ worked: 3, failed: 1, lastFailedAt: now - 200 * 86_400_000 }, now)).toBeUndefined();
    expect(
      failureWarning({ worked: 0, failed: 1, lastFailedAt: now - 2 * 86_400_000, lastFailedBy: 'c1', lastFailedNote: 'broke' }, now)
        ?.message,
    ).toMatch(/^failed in use 2 days ago .* by c1: broke/);
  });

  it('fuses with the lexical weight', () => {
    const fused = fuse(
      [
        { key: 'a', lexical: 10, semantic: 0.2 },
        { key: 'b', lexical: 0, semantic: 0.6 },
      ],
      0.7,
    );
    expect(fused.find((f) => f.key === 'a')!.relevance).toBeCloseTo(0.7);
    expect(fused.find((f) => f.key === 'b')!.relevance).toBeCloseTo(0.3);
  });
});

describe('index registry', () => {
  it('builds from the records store in pages and then refreshes from the write sequence', async () => {
    const store = createSqliteRecordStore({ path: ':memory:', sweepIntervalMs: 0 });
    try {
      const memories = store.collection<MemoryRecord>('memories');
      const sequences = store.collection<SequenceDoc>('memory_sequences');
      const registry = new IndexRegistry({ memories, sequences, now: Date.now, buildPage: 2 });
      const write = async (key: string, content: string, deleted = false) => {
        const seq = await registry.nextSeq('o', 'knowledge');
        const source = { clientId: '', userId: '', clientName: '' };
        await memories.put({
          _id: `o/knowledge/${key}`,
          organizationId: 'o',
          namespace: 'knowledge',
          key,
          title: '',
          content,
          tags: [],
          entities: [],
          source,
          createdBy: source,
          createdAt: 1,
          updatedAt: 1,
          version: 1,
          rev: seq,
          seq,
          contentHash: contentHash(content),
          stats: { worked: 0, failed: 0 },
          ...(deleted ? { deleted: true } : {}),
        });
      };
      for (let i = 0; i < 7; i++) await write(`k${i}`, `alpha word${i}`);
      await write('k3', 'gone', true);
      const index = await registry.fresh('o', 'knowledge');
      expect(
        index
          .search('alpha', 10)
          .map((h) => h.key)
          .sort(),
      ).toEqual(['k0', 'k1', 'k2', 'k4', 'k5', 'k6']);
      // Written by "another replica" (straight to the store): seen on the next fresh().
      await write('k7', 'alpha beta');
      await write('k0', 'replaced');
      const again = await registry.fresh('o', 'knowledge');
      expect(again.search('beta', 10).map((h) => h.key)).toEqual(['k7']);
      expect(again.search('word0', 10)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
