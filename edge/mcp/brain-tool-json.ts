// How the Brain's MCP tools speak: protobuf messages of the brain service turned into the JSON of
// structured content, and results and errors a model can act on.
import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  type Contradiction,
  DuplicateKind,
  type FailureWarning,
  ItemStatus,
  type Memory,
  type MemoryRef,
  MemoryRefSchema,
  Namespace,
  type OpenQuestion,
  type Scores,
  type SimilarMemory,
  type Source,
} from '../../gen/mindgate/brain/v1/brain_pb.js';
import { edgeFailureOf, isTransportFailure } from '../service-failures.ts';
import type { NamespaceName } from './brain-tool-definitions.ts';

export const nsEnum = (n: NamespaceName) => (n === 'episodes' ? Namespace.EPISODES : Namespace.KNOWLEDGE);
export const nsName = (n: Namespace): NamespaceName => (n === Namespace.EPISODES ? 'episodes' : 'knowledge');
export const toRef = (r: { namespace: NamespaceName; key: string }) =>
  create(MemoryRefSchema, { namespace: nsEnum(r.namespace), key: r.key });
export const fromRef = (r: MemoryRef | undefined) => ({ namespace: nsName(r?.namespace ?? Namespace.KNOWLEDGE), key: r?.key ?? '' });
/** A time checked by isoArgument as a timestamp. */
export const toTimestamp = (ms: number | undefined) => (ms === undefined ? undefined : timestampFromMs(ms));

/** An ISO 8601 date or time argument, or a tool error saying what to send. */
export function isoArgument(name: string, value: string | undefined): number | CallToolResult | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    return toolError(
      `${name} must be an ISO 8601 time such as 2026-11-20T09:00:00Z (or a date, 2026-11-20), got ${JSON.stringify(value)}.`,
    );
  }
  return ms;
}
const iso = (t: Parameters<typeof timestampDate>[0] | undefined) => (t ? timestampDate(t).toISOString() : '');
const STATUS_NAMES: Record<number, string> = {
  [ItemStatus.OPEN]: 'open',
  [ItemStatus.RESOLVED]: 'resolved',
  [ItemStatus.DISMISSED]: 'dismissed',
  [ItemStatus.OBSOLETE]: 'obsolete',
};
const statusName = (s: ItemStatus) => STATUS_NAMES[s] ?? 'open';
const refName = (r: MemoryRef | undefined) => (r?.key ? `${nsName(r.namespace)}/${r.key}` : undefined);

/** Who wrote a memory, as a reader knows them: the client's registered name, and the user's. */
export function writerName(source: Source | undefined): string {
  const client = source?.clientName || source?.clientId || '';
  const user = source?.userName ?? '';
  return client && user ? `${client} for ${user}` : client || user;
}

export function memoryJson(m: Memory) {
  return {
    namespace: nsName(m.namespace),
    key: m.key,
    title: m.title,
    content: m.content,
    tags: m.tags,
    entities: m.entities,
    version: Number(m.version),
    updated_at: iso(m.updateTime),
    created_at: iso(m.createTime),
    event_time: iso(m.eventTime),
    written_by: writerName(m.source),
    worked: m.stats?.worked ?? 0,
    failed: m.stats?.failed ?? 0,
    supersedes: refName(m.supersedes),
    superseded_by: refName(m.supersededBy),
  };
}

export function scoresJson(s: Scores | undefined) {
  const r = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    final: r(s?.final ?? 0),
    relevance: r(s?.relevance ?? 0),
    lexical: r(s?.lexical ?? 0),
    semantic: r(s?.semantic ?? 0),
    feedback: r(s?.feedback ?? 0),
    recency: r(s?.recency ?? 0),
    cues: r(s?.cues ?? 0),
  };
}

export function warningJson(w: FailureWarning | undefined) {
  return w ? { failed_at: iso(w.failedAt), by: w.clientId, note: w.note, message: w.message } : undefined;
}

export function contradictionJson(c: Contradiction) {
  return {
    id: c.id,
    status: statusName(c.status),
    memories: c.memories.map((m) => ({ ...fromRef(m.ref), version: Number(m.version) })),
    reason: c.reason,
    resolution: c.resolution,
    flagged_by: c.flaggedBy.toLowerCase(),
  };
}

export function questionJson(q: OpenQuestion) {
  return {
    id: q.id,
    status: statusName(q.status),
    question: q.question,
    memories: q.memories.map(fromRef),
    entities: q.entities,
    resolution: q.resolution,
  };
}

export function duplicateJson(d: SimilarMemory) {
  return {
    ...fromRef(d.ref),
    title: d.title,
    kind: d.kind === DuplicateKind.EXACT ? ('exact' as const) : ('near' as const),
    overlap: Math.round(d.overlap * 100) / 100,
    semantic: Math.round(d.semantic * 100) / 100,
  };
}

export const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A tool error the model can act on: what was wrong and what to do. */
export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

const UNAVAILABLE = 'The brain is busy or unavailable right now; retry in a few seconds.';

function explain(err: unknown): CallToolResult {
  if (err instanceof ConnectError) {
    if (edgeFailureOf(err) === 'credential-refused') {
      return toolError(
        "The Mindgate platform is misconfigured: its brain service refused the platform's own internal credential. " +
          'This is not a problem with your access token, and retrying will not help: tell the operator of this Mindgate server.',
      );
    }
    // A connection cut under the call (a service restarting) never shows its socket error.
    if (isTransportFailure(err)) return toolError(UNAVAILABLE);
    switch (err.code) {
      case Code.InvalidArgument:
        return toolError(`Invalid argument: ${err.rawMessage}. Fix it and call the tool again.`);
      case Code.NotFound:
        return toolError(`${err.rawMessage}.`);
      case Code.PermissionDenied:
        return toolError(`Refused: ${err.rawMessage}.`);
      case Code.FailedPrecondition:
      case Code.Aborted:
      case Code.ResourceExhausted:
        return toolError(`${err.rawMessage}.`);
      case Code.Unavailable:
      case Code.DeadlineExceeded:
        return toolError(UNAVAILABLE);
      default:
        break;
    }
  }
  return toolError('The brain failed to answer; retry later. If it keeps failing, continue without memory.');
}

export async function run(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    return explain(err);
  }
}

export function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}
