// A model extractor over any OpenAI-compatible chat-completions endpoint (`POST …/chat/completions`,
// JSON mode), used beside the pattern extractor where GRAPH_EXTRACTOR_URL is configured. The model
// gets the text and its entities and answers {"relationships": [{subject, predicate, object}]};
// what it answers is checked like a writer's explicit relationships and the rest dropped.
// Endpoint rule as for embeddings: a URL ending in /chat/completions is used as it is, a URL with
// no path gets /v1/chat/completions, any other path is the API base and gets /chat/completions.
import { CitationOrigin } from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import { kindEnum, kindName, normalizePredicate, VOCABULARY } from '../vocabulary.ts';
import type { Extracted, ExtractInput, RelationshipExtractor } from './interface.ts';

export interface ChatExtractorOptions {
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer …`; never logged. */
  apiKey?: string;
  /** Per call; default 10 s. A write waits at most this long for the model. */
  timeoutMs?: number;
}

export class ChatExtractorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ChatExtractorError';
  }
}

const MAX_RELATIONSHIPS = 64;

export function chatEndpoint(url: string): string {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, '');
  if (path.endsWith('/chat/completions')) parsed.pathname = path;
  else if (path === '') parsed.pathname = '/v1/chat/completions';
  else parsed.pathname = `${path}/chat/completions`;
  return parsed.toString();
}

const SYSTEM_PROMPT = [
  'You extract relationships between named things from an operations note.',
  `Use these predicates where they fit: ${VOCABULARY.join(', ')}; otherwise a short lower_snake_case verb.`,
  'A owned_by B means B owns A; A part_of B means A is a piece of B; A replaced_by B means B took the place of A.',
  'Only state what the text asserts as true now: nothing negated, hypothetical, asked or in the past.',
  'Prefer the given entity names for subjects and objects.',
  'Answer with JSON only: {"relationships":[{"subject":"...","predicate":"...","object":"...","subject_kind":"","object_kind":""}]},',
  'kinds being person, team, service, component, organization, document, other or empty.',
].join(' ');

interface ModelRelationship {
  subject?: unknown;
  predicate?: unknown;
  object?: unknown;
  subject_kind?: unknown;
  object_kind?: unknown;
}

function parseAnswer(body: unknown): ModelRelationship[] {
  const content = (body as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new ChatExtractorError('the answer has no choices[0].message.content');
  let parsed: unknown;
  try {
    // Some models wrap JSON in a code fence even in JSON mode.
    parsed = JSON.parse(content.replace(/^\s*```(?:json)?\s*|\s*```\s*$/g, ''));
  } catch {
    throw new ChatExtractorError('the model did not answer JSON');
  }
  const list = (parsed as { relationships?: unknown })?.relationships;
  if (!Array.isArray(list)) throw new ChatExtractorError('the model answer has no "relationships" list');
  return list as ModelRelationship[];
}

function checked(r: ModelRelationship, sentence: string): Extracted | undefined {
  const name = (v: unknown) => (typeof v === 'string' && v.trim() && v.trim().length <= 200 ? v.trim() : undefined);
  const subject = name(r.subject);
  const object = name(r.object);
  const predicate = typeof r.predicate === 'string' ? normalizePredicate(r.predicate) : undefined;
  if (!subject || !object || !predicate || subject.toLowerCase() === object.toLowerCase()) return undefined;
  const kind = (v: unknown) => kindName(kindEnum(typeof v === 'string' ? v : ''));
  return {
    subject,
    predicate,
    object,
    subjectKind: kind(r.subject_kind),
    objectKind: kind(r.object_kind),
    sentence,
    origin: CitationOrigin.MODEL,
  };
}

export function createChatExtractor(options: ChatExtractorOptions): RelationshipExtractor {
  const endpoint = chatEndpoint(options.url);
  return {
    name: 'openai-chat',
    async extract(input: ExtractInput): Promise<Extracted[]> {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
      const res = await fetch(endpoint, {
        method: 'POST',
        headers,
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        body: JSON.stringify({
          model: options.model,
          temperature: 0,
          response_format: { type: 'json_object' },
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: JSON.stringify({ entities: input.entities, text: input.text }) },
          ],
        }),
      });
      if (!res.ok) throw new ChatExtractorError(`the chat endpoint answered ${res.status}`);
      const answer = parseAnswer(await res.json().catch(() => undefined));
      const sentence = input.text.slice(0, 300);
      return answer.slice(0, MAX_RELATIONSHIPS).flatMap((r) => checked(r, sentence) ?? []);
    },
  };
}
