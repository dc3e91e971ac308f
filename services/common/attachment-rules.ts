// What a reference attached to a thread message may be, one set of rules for the agents service
// (which stores the references) and the REST API (which answers 422 before calling it, and states
// them in its OpenAPI schema): an absolute URI of printable ASCII (RFC 3986; an IRI's other
// characters percent-encoded) whose scheme names a place, not inline content (data:), code
// (javascript:, vbscript:) or a path on some machine (file:); a media type; a title; a size.
export const MAX_ATTACHMENTS = 20;
export const MAX_ATTACHMENT_URI = 2_000;
export const MAX_ATTACHMENT_TITLE = 200;
export const MAX_ATTACHMENT_SIZE = Number.MAX_SAFE_INTEGER;
/**
 * A scheme, a colon, then printable ASCII without spaces; the refused schemes spelled out in any
 * case, so that one pattern is the rule here and in the OpenAPI document (where a JSON Schema
 * pattern has no flags).
 */
export const ATTACHMENT_URI =
  /^(?!(?:[Dd][Aa][Tt][Aa]|[Jj][Aa][Vv][Aa][Ss][Cc][Rr][Ii][Pp][Tt]|[Vv][Bb][Ss][Cc][Rr][Ii][Pp][Tt]|[Ff][Ii][Ll][Ee]):)[A-Za-z][A-Za-z0-9+.-]*:[!-~]+$/;
/** RFC 6838 type/subtype of restricted-name characters, lower case, no parameters. */
export const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** Why the URI cannot be an attachment's, or undefined when it can. */
export function uriProblem(uri: string): string | undefined {
  if (uri === '') return 'is required';
  if (uri.length > MAX_ATTACHMENT_URI) return `must be at most ${MAX_ATTACHMENT_URI} characters`;
  if (!ATTACHMENT_URI.test(uri))
    return 'must be an absolute URI of printable ASCII (a scheme, a colon, no spaces), not data:, javascript:, vbscript: or file:';
  return undefined;
}
