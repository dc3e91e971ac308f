// Proactive content negotiation on Accept (RFC 9110 §12.5.1): each offer takes the quality of
// the most specific media range that matches it (type/subtype with parameters > type/subtype >
// type/* > */*), q=0 means "not acceptable", the highest quality wins and ties go to the order
// of the server's offers.

export interface MediaRange {
  type: string;
  subtype: string;
  /** Parameters other than q, lower-cased names and values. */
  params: Record<string, string>;
  q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** Splits on commas and semicolons outside quoted strings. */
function splitOutsideQuotes(value: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (quoted && ch === '\\' && i + 1 < value.length) {
      current += ch + value[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === separator && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function parseRange(text: string): MediaRange | undefined {
  const [mediaType, ...paramParts] = splitOutsideQuotes(text, ';').map((p) => p.trim());
  const slash = mediaType.indexOf('/');
  if (slash <= 0) return undefined;
  const type = mediaType.slice(0, slash).toLowerCase();
  const subtype = mediaType.slice(slash + 1).toLowerCase();
  if (!TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) return undefined;
  const params: Record<string, string> = {};
  let q = 1;
  for (const part of paramParts) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return undefined;
    const name = part.slice(0, eq).trim().toLowerCase();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    }
    if (name === 'q') {
      if (!QVALUE.test(value)) return undefined;
      q = Number(value);
      // Anything after q is an accept-extension, not a media type parameter.
      break;
    }
    params[name] = value.toLowerCase();
  }
  return { type, subtype, params, q };
}

/**
 * The media ranges of an Accept field value; `undefined` when the field is absent, empty or has
 * no valid range at all (then, as for a missing field, anything is acceptable). Invalid members
 * of an otherwise valid list are ignored.
 */
export function parseAccept(header: string | string[] | undefined): MediaRange[] | undefined {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined || value.trim() === '') return undefined;
  const ranges = splitOutsideQuotes(value, ',')
    .map((member) => member.trim())
    .filter((member) => member !== '')
    .map(parseRange)
    .filter((range): range is MediaRange => range !== undefined);
  return ranges.length > 0 ? ranges : undefined;
}

/** How specifically `range` matches `offer`, or -1 when it does not match. */
function specificity(range: MediaRange, offer: MediaRange): number {
  if (range.type === '*') return 0;
  if (range.type !== offer.type) return -1;
  if (range.subtype === '*') return 1;
  if (range.subtype !== offer.subtype) return -1;
  const names = Object.keys(range.params);
  for (const name of names) {
    if (offer.params[name] !== range.params[name]) return -1;
  }
  return 2 + names.length;
}

/** The quality the client gives to `offer` (0 when it is not acceptable). */
export function qualityOf(ranges: MediaRange[] | undefined, offer: string): number {
  if (!ranges) return 1;
  const parsed = parseRange(offer);
  if (!parsed) throw new Error(`invalid offer "${offer}"`);
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    const s = specificity(range, parsed);
    if (s > best) {
      best = s;
      q = range.q;
    } else if (s === best && s >= 0) {
      // Two equally specific ranges (a repeated type): the more generous one counts.
      q = Math.max(q, range.q);
    }
  }
  return best < 0 ? 0 : q;
}

/**
 * The offer to send, given the Accept field and the offers in the server's order of
 * preference; `undefined` when none is acceptable (answer 406).
 */
export function negotiate(accept: string | string[] | undefined, offers: readonly string[]): string | undefined {
  const ranges = parseAccept(accept);
  let chosen: string | undefined;
  let bestQ = 0;
  for (const offer of offers) {
    const q = qualityOf(ranges, offer);
    if (q > bestQ) {
      bestQ = q;
      chosen = offer;
    }
  }
  return chosen;
}
