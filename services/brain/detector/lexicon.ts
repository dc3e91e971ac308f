// The word lists the claim analysis (claims.ts) uses: what negates, what opposes, which words
// are numbers or dates, and which words carry no claim at all (greetings and small talk).
// Lower case; compared with the words of text.ts before stemming (opposites after).
import { stem } from '../text.ts';

export const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nothing', 'nobody', 'neither', 'nor', 'cannot', 'without', 'nowhere']);

/** Pairs of words that state opposite things about the same subject. */
const OPPOSITE_PAIRS: [string, string][] = [
  ['enabled', 'disabled'],
  ['enable', 'disable'],
  ['true', 'false'],
  ['allow', 'deny'],
  ['allowed', 'denied'],
  ['allowed', 'forbidden'],
  ['always', 'never'],
  ['on', 'off'],
  ['increase', 'decrease'],
  ['increased', 'decreased'],
  ['start', 'stop'],
  ['started', 'stopped'],
  ['open', 'closed'],
  ['success', 'failure'],
  ['succeeded', 'failed'],
  ['works', 'fails'],
  ['worked', 'failed'],
  ['safe', 'unsafe'],
  ['required', 'optional'],
  ['mandatory', 'optional'],
  ['include', 'exclude'],
  ['included', 'excluded'],
  ['before', 'after'],
  ['synchronous', 'asynchronous'],
  ['sync', 'async'],
  ['public', 'private'],
  ['supported', 'unsupported'],
  ['valid', 'invalid'],
  ['accept', 'reject'],
  ['accepted', 'rejected'],
  ['approved', 'rejected'],
  ['online', 'offline'],
  ['higher', 'lower'],
  ['more', 'less'],
  ['faster', 'slower'],
  ['larger', 'smaller'],
  ['bigger', 'smaller'],
  ['above', 'below'],
  ['added', 'removed'],
  ['internal', 'external'],
  ['available', 'unavailable'],
  ['correct', 'incorrect'],
  ['possible', 'impossible'],
  ['recommended', 'discouraged'],
  ['first', 'last'],
  ['minimum', 'maximum'],
  ['min', 'max'],
  ['inside', 'outside'],
  ['active', 'inactive'],
  ['healthy', 'unhealthy'],
  ['passed', 'failed'],
  ['passes', 'fails'],
  ['encrypted', 'unencrypted'],
  ['locked', 'unlocked'],
  ['blocked', 'unblocked'],
  ['visible', 'hidden'],
  ['manual', 'automatic'],
  ['manually', 'automatically'],
  ['love', 'hate'],
  ['loves', 'hates'],
  ['like', 'dislike'],
  ['likes', 'dislikes'],
  ['won', 'lost'],
  ['win', 'lose'],
  ['early', 'late'],
  ['earlier', 'later'],
  ['cheap', 'expensive'],
  ['cheaper', 'pricier'],
  ['easy', 'hard'],
  ['easier', 'harder'],
  ['deprecated', 'recommended'],
];

/**
 * Opposites by stem ("fails", "failed" and "fail" oppose "passed"), each with the name of its
 * group (the words linked by the pairs: fail, pass, succeed, work...): every word of a group
 * stands for the same content word, so that "is enabled" and "is disabled" are about the same
 * thing and differ only in the opposite.
 */
export const OPPOSITE = new Map<string, { opposites: string[]; group: string }>();
const groupOf = new Map<string, Set<string>>();
for (const [a, b] of OPPOSITE_PAIRS) {
  const [sa, sb] = [stem(a), stem(b)];
  for (const [x, y] of [
    [sa, sb],
    [sb, sa],
  ]) {
    const known = OPPOSITE.get(x);
    if (known) known.opposites.push(y);
    else OPPOSITE.set(x, { opposites: [y], group: '' });
  }
  const merged = new Set([...(groupOf.get(sa) ?? [sa]), ...(groupOf.get(sb) ?? [sb])]);
  for (const w of merged) groupOf.set(w, merged);
}
for (const [w, entry] of OPPOSITE) entry.group = `~${[...groupOf.get(w)!].sort()[0]}`;

/** Number words, as the digits they stand for. */
export const NUMBER_WORDS = new Map<string, string>(
  (
    'zero:0 one:1 two:2 three:3 four:4 five:5 six:6 seven:7 eight:8 nine:9 ten:10 eleven:11 twelve:12 ' +
    'thirteen:13 fourteen:14 fifteen:15 sixteen:16 seventeen:17 eighteen:18 nineteen:19 twenty:20 thirty:30 ' +
    'forty:40 fifty:50 sixty:60 seventy:70 eighty:80 ninety:90 hundred:100 thousand:1000 million:1000000 ' +
    'billion:1000000000 dozen:12 twice:2x thrice:3x third:3rd fourth:4th fifth:5th sixth:6th seventh:7th ' +
    'eighth:8th ninth:9th tenth:10th single:1 double:2x triple:3x'
  )
    .split(' ')
    .map((pair) => pair.split(':') as [string, string]),
);

const MONTHS = [
  ['january', 'jan'],
  ['february', 'feb'],
  ['march', 'mar'],
  ['april', 'apr'],
  ['may', 'may'],
  ['june', 'jun'],
  ['july', 'jul'],
  ['august', 'aug'],
  ['september', 'sep', 'sept'],
  ['october', 'oct'],
  ['november', 'nov'],
  ['december', 'dec'],
];
/** Month and weekday names and seasons, as one canonical form each. */
export const DATE_WORDS = new Map<string, string>();
for (const names of MONTHS) for (const n of names) DATE_WORDS.set(n, names[0]);
for (const day of ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']) {
  DATE_WORDS.set(day, day);
  DATE_WORDS.set(`${day}s`, day);
}
for (const season of ['spring', 'summer', 'autumn', 'fall', 'winter']) DATE_WORDS.set(season, season);
/**
 * Month names that are also ordinary words ("may", "march", "jan" as a name...): dates only when
 * capitalized inside a sentence or next to a number.
 */
export const AMBIGUOUS_DATE_WORDS = new Set(['may', 'march', 'mar', 'jan', 'dec', 'sep', 'fall', 'aug', 'oct', 'nov']);

/**
 * Times relative to when something was said: two memories saying "yesterday" were usually said
 * on different days, so these words are neither compared nor content.
 */
export const RELATIVE_TIME = new Set('today tonight yesterday tomorrow now currently recently lately ago nowadays'.split(' '));
/** "last week", "next month", "this year": relative too, both words. */
export const RELATIVE_LEAD = new Set(['last', 'next', 'this', 'past', 'coming', 'previous', 'following']);
export const TIME_UNITS = new Set('week weeks weekend month months year years day days night time summer winter season quarter'.split(' '));

/** Prepositions, determiners and adverbs the index keeps but that say nothing about the subject. */
export const FUNCTION_WORDS = new Set(
  (
    'until till since via per each every any all some both either only own same such other another into onto ' +
    'upon across through during among around behind beyond toward towards already still yet even ever also ' +
    'just here there out up down off away back once instead rather almost always often usually sometimes ' +
    'anyway though although however because whether due'
  ).split(' '),
);

/**
 * Greetings, thanks, fillers and reactions of conversation: they carry no claim, so two
 * sentences made of them never align (a goodbye is not a contradiction of another goodbye).
 */
export const SMALL_TALK = new Set(
  (
    'hi hello hey hiya howdy bye goodbye goodnight cya thanks thank thx ty cheers welcome sorry please ok okay ' +
    'yeah yea yes yep yup nope nah oh ooh ah aw aww wow whoa haha hahaha lol lmao omg hmm um uh well sure great ' +
    'good nice cool awesome amazing wonderful fantastic lovely glad happy excited fun talk chat catch see care ' +
    'soon again everything anything something thing things stuff really totally definitely absolutely actually ' +
    'honestly literally pretty quite kinda sorta kind sort lot lots much many way guess think know feel mean ' +
    'hope wish bet say said tell told gonna wanna gotta ' +
    'sounds sound seems seem appreciate means meant dear friend buddy mate ' +
    'guys guy folks everyone anyone someone morning evening night day later hear heard glad congrats ' +
    'congratulations super'
  ).split(' '),
);
