// What a text claims, sentence by sentence, as the duplicate and contradiction checks see it:
// the content words that say what a sentence is about, and the values it states about that
// (numbers, dates, names and identifiers, a negation, words with an opposite). Greetings, small
// talk, stopwords and names of people are not content: they never make two sentences "about the
// same thing".
import { isStopword, stem } from '../text.ts';
import {
  AMBIGUOUS_DATE_WORDS,
  DATE_WORDS,
  FUNCTION_WORDS,
  NEGATIONS,
  NUMBER_WORDS,
  OPPOSITE,
  RELATIVE_LEAD,
  RELATIVE_TIME,
  SMALL_TALK,
  TIME_UNITS,
} from './lexicon.ts';

export interface Claim {
  text: string;
  /** Stems of the content words. */
  content: Set<string>;
  negated: boolean;
  numbers: Set<string>;
  dates: Set<string>;
  /** Names and identifiers after the first content word: what is said about the subject. */
  values: Set<string>;
  /** Names before the first content word, and the speaker: who or what the sentence is about. */
  subjects: Set<string>;
  /** Stems of the words counted by a number ("minutes" of "20 minutes"): they align sentences but are not content. */
  units: Set<string>;
  /** Stems of the opposite list the sentence holds. */
  opposites: Set<string>;
}

export interface TextClaims {
  sentences: Claim[];
  /**
   * Every value of the text, the speaker and timestamp prefixes included: two texts whose
   * signatures differ do not say the same thing, however alike their words.
   */
  signature: string;
  /** Names and identifiers of the text (lower case): compared with the other text's mentions. */
  names: Set<string>;
  /** Lower-cased words and names anywhere in the text or its entities (mentions). */
  mentions: Set<string>;
}

/** Alphanumeric runs, joined by - _ . : / @ into one token ("eu-west-1", "v2.3", "14:00"). */
const TOKEN = /[#@]?[\p{L}\p{N}]+(?:['’]\p{L}+)*(?:[-_.:/@][\p{L}\p{N}]+(?:['’]\p{L}+)*)*/gu;
/** "[8 May 2023]" or "(2023-05-08 14:02)" at the start of a line: when it was said, not what. */
const STAMP_PREFIX = /^\s*[[(][^\])\n]{1,40}[\])]\s*/u;
/** "Caroline:" or "Dr Smith:" at the start of a line: who said it. */
const SPEAKER_PREFIX = /^\s*(\p{Lu}[\p{L}'’.-]*(?:\s+\p{Lu}[\p{L}'’.-]*){0,2})\s*:\s+/u;
const NUMBER = /^\p{N}+(?:[.,:]\p{N}+)*$/u;
/** A time of day ("14:05", "9am", "9:30pm"): when, like a date. */
const TIME = /^\d{1,2}(?::\d{2}){1,2}(?:am|pm)?$|^\d{1,2}(?:am|pm)$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:t[\d:]+z?)?$/;

interface Token {
  raw: string;
  lower: string;
  first: boolean;
}

function normalizeNumber(n: string): string {
  if (/^\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(n)) return n.replace(/,/g, '');
  return n.replace(',', '.');
}

function isName(t: Token, entityWords: Set<string>): boolean {
  if (entityWords.has(t.lower) || /\p{Ll}\p{Lu}/u.test(t.raw)) return true;
  if (!/^\p{Lu}/u.test(t.raw) || t.lower === 'i' || t.lower.startsWith("i'") || t.lower.startsWith('i’')) return false;
  // A capital at the start of a sentence says nothing; all capitals or an inner capital do ("API", "PostgreSQL").
  return !t.first || /^\p{Lu}{2,}$/u.test(t.raw);
}

class ClaimBuilder {
  readonly claim: Claim;
  private previous = '';
  private readonly entityWords: Set<string>;
  private readonly all: Set<string>;
  private readonly names: Set<string>;
  constructor(text: string, entityWords: Set<string>, all: Set<string>, names: Set<string>) {
    this.entityWords = entityWords;
    this.all = all;
    this.names = names;
    this.claim = {
      text,
      content: new Set(),
      negated: false,
      numbers: new Set(),
      dates: new Set(),
      values: new Set(),
      subjects: new Set(),
      units: new Set(),
      opposites: new Set(),
    };
  }

  private value(kind: 'numbers' | 'dates' | 'values', v: string): void {
    this.claim[kind].add(v);
    this.all.add(`${kind[0]}:${v}`);
  }

  /** Set when a number was just read: the word after it is its unit ("20 minutes"), not content. */
  private unitOf: string | undefined;

  /** A number next to a month is part of the date ("May 3", "3 May 2023"). */
  private number(n: string, next: Token | undefined): void {
    const nextIsMonth = next !== undefined && DATE_WORDS.has(next.lower) && /^\p{Lu}/u.test(next.raw);
    if (DATE_WORDS.has(this.previous) || nextIsMonth) this.value('dates', n);
    else this.unitOf = n;
  }

  /** The number read last, with its unit when the next word is one. */
  private flushNumber(unit?: string): void {
    if (this.unitOf === undefined) return;
    this.value('numbers', unit ? `${this.unitOf} ${unit}` : this.unitOf);
    if (unit) this.claim.units.add(unit);
    this.unitOf = undefined;
  }

  finish(): Claim {
    this.flushNumber();
    return this.claim;
  }

  add(t: Token, next: Token | undefined): void {
    const { lower } = t;
    const pending = this.unitOf;
    if (pending !== undefined && /^\p{L}+$/u.test(lower) && !isStopword(lower) && !NUMBER_WORDS.has(lower) && !OPPOSITE.has(stem(lower))) {
      this.flushNumber(stem(lower));
      this.previous = lower;
      return;
    }
    this.flushNumber();
    if (/^[#@]/.test(lower) || /[-_.:/@]/.test(lower)) return this.joined(t, next);
    if (TIME.test(lower)) this.value('dates', lower);
    else if (/^\p{N}/u.test(lower)) this.number(normalizeNumber(lower), next);
    else if (/\p{N}/u.test(lower)) this.name(lower);
    else if (NEGATIONS.has(lower) || /n['’]t$/.test(lower)) this.claim.negated = true;
    else if (NUMBER_WORDS.has(lower)) this.number(NUMBER_WORDS.get(lower)!, next);
    else if (this.isDate(t, next)) this.value('dates', DATE_WORDS.get(lower)!);
    else if (RELATIVE_TIME.has(lower) || this.relative(lower, next)) {
      // when it was said, relative to then: neither content nor a value
    } else this.word(t);
    this.previous = lower;
  }

  /** "last week": the lead and its unit are both relative time. */
  private relative(lower: string, next: Token | undefined): boolean {
    if (RELATIVE_LEAD.has(lower) && next !== undefined && TIME_UNITS.has(next.lower)) return true;
    return TIME_UNITS.has(lower) && RELATIVE_LEAD.has(this.previous);
  }

  private word(t: Token): void {
    const { lower } = t;
    const stemmed = stem(lower);
    const opposite = OPPOSITE.get(stemmed);
    // "you're", "it's", "I've": the base word decides.
    const base = lower.replace(/['’](?:re|ve|ll|d|m|s)$/, '');
    if (opposite) {
      this.claim.opposites.add(stemmed);
      this.claim.content.add(opposite.group);
      this.all.add(`o:${stemmed}`);
    } else if (isName(t, this.entityWords)) this.name(lower);
    else if (!SMALL_TALK.has(base) && !isStopword(base) && !FUNCTION_WORDS.has(base)) this.claim.content.add(stemmed);
  }

  private isDate(t: Token, next: Token | undefined): boolean {
    if (!DATE_WORDS.has(t.lower)) return false;
    if (!AMBIGUOUS_DATE_WORDS.has(t.lower)) return true;
    return (!t.first && /^\p{Lu}/u.test(t.raw)) || /^\p{N}/u.test(this.previous) || (next !== undefined && /^\p{N}/u.test(next.lower));
  }

  /** A name or identifier: the subject before the first content word, a value after it. */
  private name(lower: string): void {
    this.names.add(lower);
    if (this.claim.content.size > 0) this.claim.values.add(lower);
    else this.claim.subjects.add(lower);
  }

  /** "eu-west-1", "v2.3", "14:00", "2023-05-08", "30-day", "two-factor". */
  private joined(t: Token, next: Token | undefined): void {
    const { lower } = t;
    if (/^[#@]/.test(lower)) this.name(lower);
    else if (TIME.test(lower)) this.value('dates', lower);
    else if (NUMBER.test(lower)) this.number(normalizeNumber(lower), next);
    else if (ISO_DATE.test(lower)) this.value('dates', lower.slice(0, 10));
    else if (/^\p{N}+-\p{L}+$/u.test(lower)) {
      const [n, unit] = lower.split('-');
      this.number(n, next);
      this.add({ raw: unit, lower: unit, first: false }, next);
    } else if (/\p{N}/u.test(lower) || /[_.:/@]/.test(lower)) this.name(lower);
    else for (const part of t.raw.split('-')) this.add({ raw: part, lower: part.toLowerCase(), first: t.first }, next);
    this.previous = lower;
  }
}

function entityWordsOf(entities: string[]): Set<string> {
  const out = new Set<string>();
  for (const e of entities) for (const w of e.toLowerCase().match(TOKEN) ?? []) out.add(w);
  return out;
}

/** Splits a line into sentences at . ! ? ; followed by space. */
function sentencesOf(line: string): string[] {
  return line
    .split(/(?<=[.!?;])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export function analyze(text: string, entities: string[] = []): TextClaims {
  const entityWords = entityWordsOf(entities);
  const all = new Set<string>();
  const names = new Set<string>();
  const mentions = new Set<string>(entityWords);
  const sentences: Claim[] = [];
  for (let line of text.split(/\n+/)) {
    const stamp = STAMP_PREFIX.exec(line);
    if (stamp) {
      // The stamp tells two episodes apart; it is not part of any sentence's claim.
      for (const m of stamp[0].toLowerCase().matchAll(TOKEN)) all.add(`stamp:${m[0]}`);
      line = line.slice(stamp[0].length);
    }
    const speaker = SPEAKER_PREFIX.exec(line);
    if (speaker) {
      all.add(`speaker:${speaker[1].toLowerCase()}`);
      line = line.slice(speaker[0].length);
    }
    for (const sentence of sentencesOf(line)) {
      const builder = new ClaimBuilder(sentence, entityWords, all, names);
      // What one speaker says is about the speaker: another speaker may say otherwise.
      if (speaker) builder.claim.subjects.add(`speaker:${speaker[1].toLowerCase()}`);
      const tokens = [...sentence.matchAll(TOKEN)].map((m, i) => ({ raw: m[0], lower: m[0].toLowerCase(), first: i === 0 }));
      tokens.forEach((t, i) => {
        mentions.add(t.lower);
        builder.add(t, tokens[i + 1]);
      });
      sentences.push(builder.finish());
    }
  }
  const negations = sentences.filter((s) => s.negated).length;
  return { sentences, signature: [...all].sort().join('|') + (negations ? `|negated:${negations}` : ''), names, mentions };
}
