// Text fields the services trim before checking them: the schema states "not blank" as a pattern,
// so a client (and a schema fuzzer) knows a blank value is refused, and the edge checks exactly
// what the pattern says. The whitespace is JavaScript's (what String.prototype.trim removes),
// spelled out: `\s` means other characters in other regex dialects (Python's, for one).
import * as z from 'zod';

const WHITESPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/** Somewhere a character trim() keeps. */
export const NOT_BLANK = new RegExp(`[^${WHITESPACE}]`);

/** A string of at most `max` characters that is not blank. */
export const nonBlank = (max: number) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .regex(NOT_BLANK, { error: 'must not be blank' });
