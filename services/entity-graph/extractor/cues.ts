// The phrases the pattern extractor reads relationships from (docs/graph.md lists them).
// A cue sits between its subject (left) and its object (right); `reversed` cues name the object
// first ("X owns Y" is Y owned_by X). `rule` settles predicates that depend on the object:
// "is part of the web team" is membership, "is part of the payments platform" composition.

export type CueRule = 'part-or-member' | 'owner-or-part' | 'member-or-part' | 'team-only';

export interface Cue {
  re: RegExp;
  predicate: string;
  reversed?: boolean;
  rule?: CueRule;
}

const be = String.raw`(?:is|are|was|were|has been|have been|had been|is being|are being|will be|gets|get|got)\s+`;
const adverbs = String.raw`(?:(?:also|now|heavily|directly|mostly|still|currently|only|both|all)\s+)?`;

function cue(pattern: string, predicate: string, extra: Omit<Cue, 're' | 'predicate'> = {}): Cue {
  // Hyphens join words here: "on-call" holds no "call".
  return { re: new RegExp(String.raw`(?<![\w-])${pattern}(?![\w-])`, 'gi'), predicate, ...extra };
}

export const CUES: Cue[] = [
  cue(`${adverbs}(?:depends|depend)\\s+${adverbs}on`, 'depends_on'),
  cue(`${be}dependent\\s+on`, 'depends_on'),
  cue(`has\\s+an?\\s+(?:hard\\s+|strong\\s+|direct\\s+)?dependency\\s+on`, 'depends_on'),
  cue(`${adverbs}(?:relies|rely)\\s+${adverbs}on`, 'depends_on'),
  cue(`${adverbs}(?:requires|require|needs|need|uses|use)`, 'depends_on'),
  cue(`${adverbs}(?:reads|read)(?:\\s+[\\w-]+){0,2}?\\s+from`, 'depends_on'),
  cue(`${be}used\\s+by`, 'depends_on', { reversed: true }),
  cue(`${adverbs}(?:calls|call|invokes|invoke|queries|query)`, 'calls'),
  cue(`${adverbs}(?:talks|talk|sends\\s+requests|send\\s+requests)\\s+to`, 'calls'),
  cue(`${be}called\\s+by`, 'calls', { reversed: true }),
  cue(`${adverbs}(?:runs|run)\\s+(?:on|in)`, 'runs_on'),
  cue(`${be}(?:hosted|running|served)\\s+(?:on|in)`, 'runs_on'),
  cue(`${be}(?:owned|maintained|managed)\\s+by`, 'owned_by'),
  cue(`${adverbs}(?:owns|own)`, 'owned_by', { reversed: true }),
  cue(`${be}responsible\\s+for`, 'owned_by', { reversed: true }),
  cue(`${be}the\\s+owners?\\s+of`, 'owned_by', { reversed: true }),
  cue(`(?:belongs|belong)\\s+to`, 'owned_by', { rule: 'owner-or-part' }),
  cue(`${be}(?:a\\s+)?members?\\s+of`, 'member_of'),
  cue(`(?:is|are)\\s+on`, 'member_of', { rule: 'team-only' }),
  cue(`(?:joined|leads|lead|works\\s+(?:on|in|for)|work\\s+(?:on|in|for))`, 'member_of', { rule: 'team-only' }),
  cue(`${be}(?:a\\s+)?part\\s+of`, 'part_of', { rule: 'part-or-member' }),
  cue(`${be}(?:a|an|one)\\s+(?:of\\s+the\\s+)?(?:components?|modules?|parts?|pieces?)\\s+of`, 'part_of'),
  cue(`(?:includes|include)`, 'part_of', { reversed: true, rule: 'member-or-part' }),
  cue(`${be}deployed\\s+(?:to|on|in|into)`, 'deployed_to'),
  cue(`(?:deploys|deploy)\\s+(?:to|into)`, 'deployed_to'),
  cue(`(?:stores|store|keeps|keep|saves|save)(?:\\s+[\\w'-]+){0,3}?\\s+(?:in|to)`, 'stores_data_in'),
  cue(`(?:writes|write|persists|persist)(?:\\s+[\\w-]+){0,2}?\\s+(?:to|in|into)`, 'stores_data_in'),
  cue(`(?:pages|page)`, 'alerts_to'),
  cue(`alerts(?=\\s+(?:the|our|a|an)\\b)`, 'alerts_to'),
  cue(`${be}(?:replaced|superseded)\\s+by`, 'replaced_by'),
  cue(`(?:replaces|replace|replaced|supersedes|supersede)`, 'replaced_by', { reversed: true }),
];

/** Cues whose subject and object are not on either side of one phrase, with named groups a and b. */
export interface Frame {
  re: RegExp;
  predicate: string;
  /** b is the subject, a the object. */
  reversed?: boolean;
}

export const FRAMES: Frame[] = [
  {
    re: /\balerts?\s+(?:for|from|on|of)\s+(?<a>.+?)\s+(?:go|goes|are\s+sent|are\s+routed|get\s+sent|is\s+sent|is\s+routed|page|pages)\s+(?:to\s+)?(?<b>.+)$/i,
    predicate: 'alerts_to',
  },
  {
    re: /^(?<a>.+?)\s+alerts\s+(?:go|goes|are\s+sent|are\s+routed|get\s+sent|get\s+routed)\s+to\s+(?<b>.+)$/i,
    predicate: 'alerts_to',
  },
  { re: /\bownership\s+of\s+(?<a>.+?)\s+(?:moved|went|passed|was\s+transferred)\s+to\s+(?<b>.+)$/i, predicate: 'owned_by' },
  { re: /\b(?:is|are)\s+stored\s+in\s+(?<b>.+?)\s+by\s+(?<a>.+)$/i, predicate: 'stores_data_in' },
  { re: /\brequests?\s+to\s+(?<b>.+?)\s+(?:is|are)\s+(?:made|sent)\s+by\s+(?<a>.+)$/i, predicate: 'calls' },
  { re: /\bmigrated\s+from\s+(?<a>.+?)\s+to\s+(?<b>.+)$/i, predicate: 'replaced_by' },
  { re: /\bdeploy\s+(?<a>.+?)\s+to\s+(?<b>.+)$/i, predicate: 'deployed_to' },
  { re: /^(?<a>.+?)(?:'s|')\s+data\s+(?:lives|is\s+stored|is\s+kept|sits)\s+in\s+(?<b>.+)$/i, predicate: 'stores_data_in' },
];
