// ETags of the Agents API's resources and the If-Match precondition (RFC 9110 §8.8.3, §13.1.1).
// A resource's service hands out an opaque version string; the API shows it quoted as a strong
// ETag and passes a client's If-Match back, so the service applies the update only to the version
// the client read (412 otherwise).

/** If-Match that is not one strong ETag or `*` (412, before anything changes). */
export class PreconditionError extends Error {}

export function quoteEtag(version: string): string {
  return `"${version}"`;
}

/** The version an update is conditional on: '' without If-Match (or with `*`). */
export function ifMatch(header: string | string[] | undefined): string {
  if (header === undefined) return '';
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  if (value === '*') return '';
  const match = /^"([\x21\x23-\x7e]{1,64})"$/.exec(value);
  if (!match) throw new PreconditionError('If-Match must be the one ETag a GET returned, such as "3"');
  return match[1];
}

/** The ETag response header, as the OpenAPI document describes it. */
export const ETAG_HEADER = { ETag: { description: 'The version, to send back as If-Match.', schema: { type: 'string' } } };
