// The text recall_context hands a model: a header, the open contradictions and questions that
// touch the memories it shows (capped), then the memories, best first, within a token budget.
import { eventTimeOf } from '../event-time.ts';
import type { ContradictionRecord, QuestionRecord } from '../items-record.ts';
import { refString, type MemoryRecord } from '../memory-record.ts';
import type { ResultScores } from '../search/hybrid.ts';
import type { Warning } from '../search/ranking.ts';
import { estimateTokens } from '../text.ts';

/** A memory chosen for the context, and why. */
export interface Picked {
  record: MemoryRecord;
  reasons: string[];
  scores?: ResultScores;
  warning?: Warning;
  rank: number;
  truncated?: boolean;
}

/** Share of the budget the open contradictions and questions may use. */
const ITEMS_SHARE = 0.3;
/** Open contradictions shown at most: the ones touching the best memories come first. */
export const MAX_CONTRADICTIONS = 5;
/** Open questions shown at most. */
export const MAX_QUESTIONS = 5;

const CONTRADICTIONS_TITLE = 'Open contradictions (settle with manage_memories: fix or supersede a memory, or resolve the id):';
const QUESTIONS_TITLE = 'Open questions:';

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Who wrote a memory, by the client's registered name and the user's, when known. */
export function writerName(source: MemoryRecord['source']): string {
  const client = source.clientName || source.clientId;
  const user = source.userName;
  return client && user ? `${client} for ${user}` : client || user || '';
}

/** "happened 2025-05-02, " when the event time is not the day the memory was written. */
function happened(r: MemoryRecord): string {
  const at = eventTimeOf(r);
  return day(at) === day(r.createdAt) ? '' : `happened ${day(at)}, `;
}

export function renderMemoryHeader(r: MemoryRecord): string {
  const by = writerName(r.source);
  const stats = r.stats.worked || r.stats.failed ? `; worked ${r.stats.worked}, failed ${r.stats.failed}` : '';
  const title = r.title ? ` — ${r.title}` : '';
  const history = r.supersededBy ? `; HISTORY, superseded by ${refString(r.supersededBy.namespace, r.supersededBy.key)}` : '';
  const corrects = r.supersedes ? `; supersedes ${refString(r.supersedes.namespace, r.supersedes.key)}` : '';
  return `### ${r.namespace}/${r.key}${title} (${happened(r)}v${r.version}, updated ${day(r.updatedAt)}${by ? ` by ${by}` : ''}${stats}${corrects}${history})`;
}

export function renderContradiction(c: ContradictionRecord): string {
  return `- ${c.id}: ${c.refs.join(' vs ')}: ${clip(c.reason, 300)}`;
}

export function renderQuestion(q: QuestionRecord): string {
  const about = [...q.refs, ...q.entityNames];
  return `- ${q.id}: ${clip(q.question, 300)}${about.length ? ` (about ${about.join(', ')})` : ''}`;
}

/** Lines under a title, as many as fit in `room` estimated tokens. */
function section<T>(title: string, items: T[], render: (item: T) => string, room: number): { text: string; kept: T[]; cut: boolean } {
  const lines: string[] = [];
  const kept: T[] = [];
  for (const item of items) {
    const line = render(item);
    if (estimateTokens(`${title}\n${[...lines, line].join('\n')}`) + 1 > room)
      return { text: lines.length ? `${title}\n${lines.join('\n')}` : '', kept, cut: true };
    lines.push(line);
    kept.push(item);
  }
  return { text: lines.length ? `${title}\n${lines.join('\n')}` : '', kept, cut: false };
}

/** The memories that fit in `room` tokens, best first; the last may be shortened. */
function packMemories(chosen: Picked[], room: number): { blocks: string[]; included: Picked[]; used: number; cut: boolean } {
  const blocks: string[] = [];
  const included: Picked[] = [];
  let used = 0;
  for (const p of chosen) {
    const head = [renderMemoryHeader(p.record), p.warning ? `WARNING: ${p.warning.message}` : ''].filter(Boolean).join('\n');
    const full = `${head}\n${p.record.content}`;
    if (used + estimateTokens(full) + 1 <= room) {
      blocks.push(full);
      included.push(p);
      used += estimateTokens(full) + 1;
      continue;
    }
    const chars = (room - used - estimateTokens(head) - 3) * 4;
    if (chars >= 200) {
      const short = `${head}\n${p.record.content.slice(0, chars - 1)}…`;
      blocks.push(short);
      included.push({ ...p, truncated: true });
      used += estimateTokens(short) + 1;
    }
    return { blocks, included, used, cut: true };
  }
  return { blocks, included, used, cut: false };
}

export interface Composed {
  context: string;
  included: Picked[];
  contradictions: ContradictionRecord[];
  questions: QuestionRecord[];
  truncated: boolean;
}

export interface ComposeInput {
  header: string;
  chosen: Picked[];
  contradictions: ContradictionRecord[];
  questions: QuestionRecord[];
  /** Entities asked for: questions about them are shown even without a memory. */
  entities: string[];
  budget: number;
}

/**
 * Packs the context: room is kept for the open items first (at most ITEMS_SHARE of the budget),
 * the memories fill the rest, and then only the items touching a memory that made it in are shown.
 */
export function composeContext(input: ComposeInput): Composed {
  const { header, chosen, budget } = input;
  const headerCost = estimateTokens(header) + 1;
  const itemsRoom = budget * ITEMS_SHARE;
  const wanted = [
    section(CONTRADICTIONS_TITLE, input.contradictions.slice(0, MAX_CONTRADICTIONS), renderContradiction, itemsRoom),
    section(QUESTIONS_TITLE, input.questions.slice(0, MAX_QUESTIONS), renderQuestion, itemsRoom),
  ];
  const reserve = Math.min(
    itemsRoom,
    wanted.reduce((sum, s) => sum + (s.text ? estimateTokens(s.text) + 1 : 0), 0),
  );
  const memories = packMemories(chosen, budget - headerCost - reserve);
  const shown = new Set(memories.included.map((p) => refString(p.record.namespace, p.record.key)));
  const entities = new Set(input.entities.map((e) => e.trim().toLowerCase()));
  const room = budget - headerCost - memories.used;
  const ctrs = section(
    CONTRADICTIONS_TITLE,
    input.contradictions.filter((c) => c.refs.some((r) => shown.has(r))).slice(0, MAX_CONTRADICTIONS),
    renderContradiction,
    Math.min(room, itemsRoom),
  );
  const qs = section(
    QUESTIONS_TITLE,
    input.questions.filter((q) => q.refs.some((r) => shown.has(r)) || q.entities.some((e) => entities.has(e))).slice(0, MAX_QUESTIONS),
    renderQuestion,
    Math.min(room, itemsRoom) - (ctrs.text ? estimateTokens(ctrs.text) + 1 : 0),
  );
  const empty = chosen.length === 0 ? ['No memory matched. Record what you learn with manage_memories.'] : [];
  const context = [header, ctrs.text, qs.text, ...memories.blocks, ...empty].filter(Boolean).join('\n\n');
  return {
    context,
    included: memories.included,
    contradictions: ctrs.kept,
    questions: qs.kept,
    truncated: memories.cut || ctrs.cut || qs.cut || input.contradictions.length > ctrs.kept.length,
  };
}
