// What a query names besides its words: a period ("in March 2023", "2023-05-02", "last week")
// and entities the organization's memories list ("Alice's", "billing-api"). A memory that
// happened in that period or mentions those entities answers the query more likely than one
// that only shares its words: on the conversational labeled set, "What did Yara cook in August
// 2023?" has several cooking turns of Yara and many of other people (docs/brain.md has the
// figures). Cues add candidates (searches restricted to the period or the entities) and a bonus
// in the ranking (ranking.ts); they never filter anything out.
import type { LexicalIndex } from './lexical-index.ts';
import { normalizeEntity } from './lexical-index.ts';

export interface QueryCues {
  /** The period the query names, [after, before). */
  period?: { after: number; before: number };
  /** Entities (normalized) the query names that some memory lists. */
  entities: string[];
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';
const YEAR = '((?:19|20|21)\\d\\d)';
const DAY_MS = 86_400_000;

const month = (name: string) => MONTHS.indexOf(name.slice(0, 3).toLowerCase());
const monthRange = (y: number, m: number) => ({ after: Date.UTC(y, m, 1), before: Date.UTC(y, m + 1, 1) });
const dayRange = (y: number, m: number, d: number) => ({ after: Date.UTC(y, m, d), before: Date.UTC(y, m, d + 1) });

/** The period named by the query, the most precise one first; undefined when none. */
export function queryPeriod(query: string, now: number): QueryCues['period'] {
  const q = query.toLowerCase();
  let m = q.match(/\b((?:19|20|21)\d\d)-(\d\d)(?:-(\d\d))?\b/);
  if (m) return m[3] ? dayRange(+m[1]!, +m[2]! - 1, +m[3]) : monthRange(+m[1]!, +m[2]! - 1);
  m = q.match(new RegExp(`\\b${MONTH}\\.? (\\d{1,2})(?:st|nd|rd|th)?,? ${YEAR}\\b`));
  if (m) return dayRange(+m[3]!, month(m[1]!), +m[2]!);
  m = q.match(new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)? (?:of )?${MONTH}\\.?,? ${YEAR}\\b`));
  if (m) return dayRange(+m[3]!, month(m[2]!), +m[1]!);
  m = q.match(new RegExp(`\\b${MONTH}\\.?,? (?:of )?${YEAR}\\b`));
  if (m) return monthRange(+m[2]!, month(m[1]!));
  m = q.match(new RegExp(`\\b(?:in|during|of|throughout) ${YEAR}\\b`));
  if (m) return { after: Date.UTC(+m[1]!, 0, 1), before: Date.UTC(+m[1]! + 1, 0, 1) };
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  if (/\byesterday\b/.test(q)) return { after: today - DAY_MS, before: today };
  if (/\btoday\b/.test(q)) return { after: today, before: today + DAY_MS };
  if (/\blast week\b/.test(q)) return { after: today - 7 * DAY_MS, before: today + DAY_MS };
  if (/\blast month\b/.test(q)) return { after: today - 31 * DAY_MS, before: today + DAY_MS };
  if (/\blast year\b/.test(q)) return { after: today - 366 * DAY_MS, before: today + DAY_MS };
  return undefined;
}

/** Runs of one to three words of the query (possessives dropped) that memories list as entities. */
export function queryEntities(query: string, index: LexicalIndex): string[] {
  const tokens = query
    .split(/\s+/)
    .map((t) => t.replace(/['’]s$/i, '').replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
  const found = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    for (let n = 3; n >= 1; n--) {
      if (i + n > tokens.length) continue;
      const name = normalizeEntity(tokens.slice(i, i + n).join(' '));
      if (index.hasEntity(name)) {
        found.add(name);
        break;
      }
    }
  }
  return [...found];
}

export function queryCues(query: string, index: LexicalIndex, now: number): QueryCues {
  return { period: queryPeriod(query, now), entities: queryEntities(query, index) };
}

/** 0..1: the share of the query's cues the memory matches (0 when the query has none). */
export function cueScore(cues: QueryCues, index: LexicalIndex, key: string): number {
  let named = 0;
  let matched = 0;
  if (cues.period) {
    named += 1;
    if (index.matches(key, { eventAfter: cues.period.after, eventBefore: cues.period.before })) matched += 1;
  }
  if (cues.entities.length) {
    named += 1;
    if (index.matches(key, { entities: cues.entities })) matched += 1;
  }
  return named ? matched / named : 0;
}
