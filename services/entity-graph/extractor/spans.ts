// From the words on one side of a cue to the names of the entities there: the memory's own
// entities first (the nearest one to the cue, and those coordinated with it by "and" or commas),
// otherwise a short noun phrase read off the words next to the cue.

export interface Mention {
  start: number;
  end: number;
  name: string;
}

const CONNECTORS = /^(?:\s|,|&|\band\b|\bor\b|\bas well as\b|\bboth\b|\bby\b|\bthe\b|\bour\b|\bits\b|\btheir\b)*$/i;
const DETERMINERS = new Set([
  'the',
  'a',
  'an',
  'our',
  'its',
  'their',
  'his',
  'her',
  'this',
  'that',
  'these',
  'those',
  'both',
  'all',
  'every',
  'each',
  'dedicated',
]);
const LEFT_STOPS = new Set([
  ...DETERMINERS,
  'is',
  'are',
  'was',
  'were',
  'be',
  'and',
  'or',
  'but',
  'so',
  'then',
  'since',
  'because',
  'when',
  'while',
  'if',
  'that',
  'which',
  'who',
  'in',
  'on',
  'at',
  'for',
  'from',
  'to',
  'of',
  'by',
  'with',
  'under',
  'after',
  'before',
  'now',
  'also',
  'we',
  'they',
  'it',
]);
const RIGHT_STOPS = new Set([
  'for',
  'to',
  'over',
  'through',
  'with',
  'when',
  'before',
  'after',
  'because',
  'in',
  'on',
  'at',
  'from',
  'by',
  'every',
  'each',
  'via',
  'since',
  'which',
  'that',
  'who',
  'if',
  'first',
  'last',
  'today',
  'directly',
  'anymore',
  'instead',
  'as',
  'without',
  'is',
  'are',
  'was',
  'were',
]);
const PRONOUNS = new Set(['it', 'them', 'this', 'that']);

/** Occurrences of the entity names in a text, longest first where they overlap, in text order. */
export function findMentions(text: string, entities: string[]): Mention[] {
  const lower = text.toLowerCase();
  const found: Mention[] = [];
  const names = [...new Set(entities)].filter((e) => e.trim()).sort((a, b) => b.length - a.length);
  for (const name of names) {
    const needle = name.toLowerCase();
    for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + 1)) {
      const end = at + needle.length;
      const bounded = !/[a-z0-9]/i.test(lower[at - 1] ?? ' ') && !/[a-z0-9]/i.test(lower[end] ?? ' ');
      if (bounded && !found.some((m) => at < m.end && end > m.start)) found.push({ start: at, end, name });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

export interface Side {
  names: string[];
  /** Where the names end (right side) or start (left side) in the text. */
  edge: number;
}

/** Entity names in [from, to): the one nearest the cue and those coordinated with it. */
export function mentionedIn(text: string, mentions: Mention[], from: number, to: number, side: 'left' | 'right'): Side | undefined {
  const inside = mentions.filter((m) => m.start >= from && m.end <= to);
  if (inside.length === 0) return undefined;
  const ordered = side === 'left' ? [...inside].reverse() : inside;
  // The words between the cue and the nearest name must not hold another clause.
  const gap = side === 'left' ? text.slice(ordered[0].end, to) : text.slice(from, ordered[0].start);
  if (/[,;]|\b(?:and|but|which|because|when|if)\b/i.test(gap)) return undefined;
  const picked = [ordered[0]];
  for (let i = 1; i < ordered.length; i++) {
    const [a, b] = side === 'left' ? [ordered[i], ordered[i - 1]] : [ordered[i - 1], ordered[i]];
    const between = text.slice(a.end, b.start);
    // ", and" starts another clause ("A needs B, and C needs D"); "A, B and C" is a list.
    if (!CONNECTORS.test(between) || /,\s*and\b/i.test(between)) break;
    picked.push(ordered[i]);
  }
  const edge = side === 'left' ? picked[picked.length - 1].start : picked[picked.length - 1].end;
  return { names: picked.map((m) => m.name), edge };
}

const TOKEN = /\S+/g;
const clean = (w: string) => w.replace(/^[("'`]+|[)"'`.,;:!?]+$/g, '');

/** A noun phrase ending at `to` (the subject side), or undefined. */
export function phraseBefore(text: string, from: number, to: number): Side | undefined {
  const tokens = [...text.slice(from, to).matchAll(TOKEN)];
  const out: string[] = [];
  let edge = to;
  for (const token of tokens.reverse()) {
    const w = clean(token[0]);
    if (!w || LEFT_STOPS.has(w.toLowerCase()) || /[,;]$/.test(token[0])) break;
    out.unshift(w);
    edge = from + token.index!;
    if (out.length === 4) break;
  }
  return out.length > 0 ? { names: [out.join(' ')], edge } : undefined;
}

/** Noun phrases starting at `from` (the object side), several when coordinated. */
export function phrasesAfter(text: string, from: number, to: number): Side | undefined {
  const out: string[] = [];
  let current: string[] = [];
  let edge = from;
  const flush = () => {
    while (current.length && DETERMINERS.has(current[0].toLowerCase())) current.shift();
    if (current.length) out.push(current.join(' '));
    current = [];
  };
  let afterComma = false;
  for (const token of text.slice(from, to).matchAll(TOKEN)) {
    const raw = token[0];
    const w = clean(raw);
    const lower = w.toLowerCase();
    // ", and" starts another clause; "A, B and C" is a list.
    if (afterComma && lower === 'and') break;
    afterComma = false;
    if ((lower === 'and' || lower === 'or') && current.length > 0) {
      flush();
      continue;
    }
    if (!w || RIGHT_STOPS.has(lower) || lower === 'and' || current.length === 5) break;
    current.push(w);
    edge = from + token.index! + raw.length;
    if (/[.;:!?)]$/.test(raw)) break;
    if (raw.endsWith(',')) {
      flush();
      afterComma = true;
    }
  }
  flush();
  return out.length > 0 ? { names: out.slice(0, 4), edge } : undefined;
}

export function isPronoun(span: string): boolean {
  return PRONOUNS.has(
    span
      .trim()
      .toLowerCase()
      .replace(/[.,;]$/, ''),
  );
}
