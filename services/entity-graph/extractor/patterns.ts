// The model-free extractor: reads "X depends on Y", "X is owned by the Y team", "X runs on Y"
// and the other phrases of cues.ts out of a memory's text, sentence by sentence. Subjects and
// objects are the memory's own entities where they appear next to a cue (and "and"-lists of
// them), otherwise a short noun phrase. Negated, hedged and questioned statements ("no longer
// depends on", "whether X runs on Y", "Should X call Y?") assert nothing. Its precision and recall
// on the labeled set test/fixtures/graph-extraction.jsonl are in docs/graph.md.
import { CitationOrigin } from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { KindName } from '../vocabulary.ts';
import { CUES, FRAMES, type Cue } from './cues.ts';
import type { Extracted, ExtractInput, RelationshipExtractor } from './interface.ts';
import { findMentions, isPronoun, mentionedIn, phraseBefore, phrasesAfter, type Mention, type Side } from './spans.ts';

const NEGATION = /\b(?:not|never|no longer|used to|whether|should|would|could|might|cannot|if)\b|n't\b/i;
const ELIDED = /^[\s,]*(?:(?:and|but|or)\s+)?(?:(?:now|also|then|later|still)\s+)?$/i;
const TEAM = /\b(?:team|rotation|squad|group|guild)$/i;

interface Match {
  cue: Cue;
  start: number;
  end: number;
}

interface ClauseState {
  /** Subjects of the last statement, for "it" in a later sentence. */
  previous: string[];
}

export function createPatternExtractor(): RelationshipExtractor {
  return { name: 'patterns', extract: async (input) => extractPatterns(input) };
}

export function extractPatterns(input: ExtractInput): Extracted[] {
  const out: Extracted[] = [];
  const seen = new Set<string>();
  const state: ClauseState = { previous: [] };
  for (const sentence of sentencesOf(input.text)) {
    if (sentence.endsWith('?')) continue;
    for (const clause of clausesOf(sentence, input.entities)) {
      for (const r of readClause(clause, sentence, input.entities, state)) {
        const key = `${r.subject.toLowerCase()}\u0000${r.predicate}\u0000${r.object.toLowerCase()}`;
        if (r.subject.toLowerCase() === r.object.toLowerCase() || seen.has(key)) continue;
        seen.add(key);
        out.push(r);
      }
    }
  }
  return out;
}

/** Sentences (and semicolon-separated halves), without their closing period. */
export function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=["'(#A-Za-z0-9])|\n+|;\s+/)
    .map((s) => s.trim().replace(/[.!]+$/, ''))
    .filter(Boolean);
}

/** A sentence with ", which …," clauses taken out and read as statements about what they follow. */
function clausesOf(sentence: string, entities: string[]): string[] {
  const relative = /,\s*(?:which|who)\s+([^,]+?)(?:,|$)/i.exec(sentence);
  if (!relative) return [sentence];
  const before = sentence.slice(0, relative.index);
  const mentions = findMentions(before, entities);
  const antecedent = mentions.length > 0 ? mentions[mentions.length - 1].name : phraseBefore(before, 0, before.length)?.names[0];
  const main = `${before} ${sentence.slice(relative.index + relative[0].length)}`.trim();
  return antecedent ? [main, `${antecedent} ${relative[1]}`] : [main];
}

/** Cues in the clause, the longest where they overlap; none inside a name ("feature store saves"). */
function cueMatches(clause: string, mentions: Mention[]): Match[] {
  let masked = clause;
  for (const n of mentions) masked = masked.slice(0, n.start) + '\u00a7'.repeat(n.end - n.start) + masked.slice(n.end);
  const all: Match[] = [];
  for (const cue of CUES) {
    for (const m of masked.matchAll(cue.re)) all.push({ cue, start: m.index!, end: m.index! + m[0].length });
  }
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Match[] = [];
  for (const m of all) if (!kept.some((k) => m.start < k.end && m.end > k.start)) kept.push(m);
  return kept;
}

function readClause(clause: string, sentence: string, entities: string[], state: ClauseState): Extracted[] {
  const framed = readFrame(clause, sentence, entities, state);
  if (framed) return framed.map(({ cueSubject: _, ...r }) => r);
  const mentions = findMentions(clause, entities);
  const matches = cueMatches(clause, mentions);
  const out: Statement[] = [];
  let leftFrom = 0;
  let clauseSubjects: string[] = [];
  for (const [i, m] of matches.entries()) {
    const rightTo = matches[i + 1]?.start ?? clause.length;
    const leftText = clause.slice(leftFrom, m.start);
    const right = sideOf(clause, mentions, m.end, rightTo, 'right', state);
    if (NEGATION.test(lastClauseOf(clause.slice(leftFrom, m.end))) || /\banymore\b/i.test(clause.slice(m.end, rightTo))) {
      leftFrom = right?.edge ?? rightTo;
      continue;
    }
    const left =
      ELIDED.test(leftText) && clauseSubjects.length > 0
        ? { names: clauseSubjects, edge: m.start }
        : sideOf(clause, mentions, leftFrom, m.start, 'left', state);
    leftFrom = right?.edge ?? rightTo;
    if (!left || !right) continue;
    clauseSubjects = left.names;
    out.push(...statements(m.cue, left.names, right.names, sentence));
  }
  if (out.length > 0) state.previous = [out[out.length - 1].cueSubject];
  return out.map(({ cueSubject: _, ...r }) => r);
}

/** The words after the last clause break (a comma, "because", "since"...): where a negation counts. */
function lastClauseOf(text: string): string {
  const parts = text.split(/,|\b(?:because|since|so|when|while|as)\b/i);
  return parts[parts.length - 1];
}

function sideOf(
  clause: string,
  mentions: Mention[],
  from: number,
  to: number,
  side: 'left' | 'right',
  state: ClauseState,
): Side | undefined {
  const text = clause.slice(from, to);
  if (isPronoun(side === 'right' ? (text.trim().split(/\s+/)[0] ?? '') : text)) {
    if (state.previous.length === 0) return undefined;
    return { names: state.previous, edge: side === 'right' ? from + text.search(/\S/) + text.trim().split(/\s+/)[0].length : from };
  }
  const named = mentionedIn(clause, mentions, from, to, side);
  if (named) return named;
  return side === 'left' ? phraseBefore(clause, from, to) : phrasesAfter(clause, from, to);
}

type Statement = Extracted & { cueSubject: string };

function statements(cue: Cue, lefts: string[], rights: string[], sentence: string): Statement[] {
  const out: Statement[] = [];
  for (const l of lefts) {
    for (const r of rights) {
      const [subject, object] = cue.reversed ? [r, l] : [l, r];
      const predicate = predicateFor(cue, l, r);
      if (!predicate) continue;
      out.push({ ...statement(subject, predicate, object, sentence), cueSubject: l });
    }
  }
  return out;
}

function predicateFor(cue: Cue, left: string, right: string): string | undefined {
  switch (cue.rule) {
    case 'team-only':
      return TEAM.test(right) ? cue.predicate : undefined;
    case 'part-or-member':
      return TEAM.test(right) ? 'member_of' : 'part_of';
    case 'owner-or-part':
      return TEAM.test(right) ? 'owned_by' : 'part_of';
    case 'member-or-part':
      return TEAM.test(left) ? 'member_of' : 'part_of';
    default:
      return cue.predicate;
  }
}

function readFrame(clause: string, sentence: string, entities: string[], state: ClauseState): Statement[] | undefined {
  for (const frame of FRAMES) {
    const m = frame.re.exec(clause);
    if (!m?.groups) continue;
    const { a, b } = m.groups;
    const as = findMentions(a, entities).map((x) => x.name);
    const bs = findMentions(b, entities).map((x) => x.name);
    const subjects = as.length > 0 ? as : isPronoun(a) ? state.previous : (phraseBefore(a, 0, a.length)?.names ?? []);
    const objects = bs.length > 0 ? bs.slice(0, 1) : (phrasesAfter(b, 0, b.length)?.names ?? []);
    const out = subjects.flatMap((s) => objects.map((o) => ({ ...statement(s, frame.predicate, o, sentence), cueSubject: s })));
    return out;
  }
  return undefined;
}

function statement(subject: string, predicate: string, object: string, sentence: string): Extracted {
  return {
    subject,
    predicate,
    object,
    subjectKind: kindGuess(subject, predicate, 'subject'),
    objectKind: kindGuess(object, predicate, 'object'),
    sentence,
    origin: CitationOrigin.EXTRACTED,
  };
}

/** A kind where the wording makes it plain; otherwise none (kinds are set later by people). */
function kindGuess(name: string, predicate: string, role: 'subject' | 'object'): KindName {
  if (TEAM.test(name)) return 'team';
  if (role === 'subject' && predicate === 'member_of') return 'person';
  if (role === 'object' && (predicate === 'runs_on' || predicate === 'deployed_to' || predicate === 'stores_data_in')) return 'component';
  return '';
}
