// The response head parser of the gateway's own backend client (backend-client.ts): the status
// line and header fields of one HTTP/1.1 response, checked as backend-client.ts's header comment
// lists (RFC 9112), and what they say about framing the body and reusing the connection.

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Any character a header line may not hold (RFC 9110 §5.5), CR and LF included. */
export const BAD_LINE = /[^\t\x20-\x7e\x80-\xff]/;
const DIGITS = /^\d{1,15}$/;
const STATUS_LINE = /^HTTP\/1\.[01] [1-9]\d\d(?: |$)/;
const KEEP_ALIVE_TIMEOUT = /(?:^|[\s,;])timeout\s*=\s*(\d+)/i;
/** Response fields that describe this connection, not the message. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** One response head: a final response, or an interim 1xx one that the real one follows. */
export interface ResponseHead {
  status: number;
  reason: string;
  /** Flat: lower-case name, value, name, value… without hop-by-hop fields. */
  headers: string[];
  /** Content-Length; -1 when absent. */
  length: number;
  /** Transfer-Encoding: chunked (the only transfer coding accepted). */
  chunked: boolean;
  /** The backend closes the connection after this response (HTTP/1.0, `Connection: close`). */
  close: boolean;
  /** The backend's `Keep-Alive: timeout=` hint in ms; Infinity when absent. */
  keepAliveHintMs: number;
}

/** Parses a response head (without its final CRLF CRLF); returns what is wrong with it, if anything. */
export function parseResponseHead(text: string): ResponseHead | string {
  const lineEnd = text.indexOf('\r\n');
  const statusLine = lineEnd === -1 ? text : text.slice(0, lineEnd);
  if (BAD_LINE.test(statusLine)) return 'the status line holds control characters';
  // HTTP/1.x SP 3DIGIT [SP reason]
  const minor = statusLine.charCodeAt(7);
  if (!STATUS_LINE.test(statusLine) || (minor !== 48 && minor !== 49)) return 'the status line is malformed';
  const head: ResponseHead = {
    status: Number(statusLine.slice(9, 12)),
    reason: statusLine.length > 13 ? statusLine.slice(13) : '',
    headers: [],
    length: -1,
    chunked: false,
    close: minor === 48,
    keepAliveHintMs: Infinity,
  };
  const problem = readFields(text, lineEnd === -1 ? text.length : lineEnd + 2, head, minor === 48);
  if (problem) return problem;
  // RFC 9112 §6.3 lets Transfer-Encoding win, but calls the pair a sign of smuggling that
  // "ought to be handled as an error": llhttp (Node, undici) refuses it, and so do we.
  if (head.status >= 200 && head.chunked && head.length !== -1) return 'the response has both Transfer-Encoding and Content-Length';
  return head;
}

/** Reads the header fields from `pos` into `head`; returns what is wrong with them, if anything. */
function readFields(text: string, pos: number, head: ResponseHead, http10: boolean): string | undefined {
  const { headers } = head;
  let codings: string | undefined;
  let dropNamed: string[] | undefined;
  while (pos < text.length) {
    let next = text.indexOf('\r\n', pos);
    if (next === -1) next = text.length;
    const line = text.slice(pos, next);
    pos = next + 2;
    if (BAD_LINE.test(line)) return 'a header line holds control characters';
    const first = line.charCodeAt(0);
    if (first === 32 || first === 9) return 'the response head uses obsolete line folding';
    const colon = line.indexOf(':');
    if (colon <= 0) return 'a header line has no name';
    const raw = line.slice(0, colon);
    if (!TOKEN.test(raw)) return 'a header name is not a token';
    const name = raw.toLowerCase();
    const value = line.slice(colon + 1).trim();
    switch (name) {
      case 'content-length': {
        if (!DIGITS.test(value)) return 'Content-Length is not a number';
        // Even equal values are refused, as llhttp refuses them (RFC 9110 §8.6 allows either).
        if (head.length !== -1) return 'the response has more than one Content-Length';
        headers.push(name, value);
        head.length = Number(value);
        break;
      }
      case 'transfer-encoding':
        codings = codings === undefined ? value : codings ? `${codings}, ${value}` : value;
        break;
      case 'connection':
        dropNamed = readConnection(value, head, http10, dropNamed);
        break;
      case 'keep-alive': {
        const m = KEEP_ALIVE_TIMEOUT.exec(value);
        if (m) head.keepAliveHintMs = Number(m[1]) * 1000;
        break;
      }
      default:
        if (!HOP_BY_HOP.has(name)) headers.push(name, value);
    }
  }
  if (codings !== undefined) {
    // We never send TE, so the only transfer coding a backend may apply is chunked (RFC 9112
    // §7.4, §6.1). A coding such as gzip cannot be passed on (it is hop-by-hop, and turning
    // it into Content-Encoding would change what the representation is, and clash with a
    // Content-Encoding already there), and decoding it is work for a coding nobody asked
    // for: refused, as newer nginx refuses it ("upstream sent unknown Transfer-Encoding").
    // Debian 12's nginx 1.22 relays the gzip bytes without a word, as this client did.
    if (codings.trim().toLowerCase() !== 'chunked') return `the backend used a transfer coding other than chunked: ${codings}`;
    head.chunked = true;
  }
  if (dropNamed) {
    for (let i = headers.length - 2; i >= 0; i -= 2) {
      if (dropNamed.includes(headers[i]!)) headers.splice(i, 2);
    }
  }
  return undefined;
}

/** Reads one Connection field: `close`, `keep-alive`, and the names of further hop-by-hop fields. */
function readConnection(value: string, head: ResponseHead, http10: boolean, dropNamed: string[] | undefined): string[] | undefined {
  for (const token of value.toLowerCase().split(',')) {
    const t = token.trim();
    if (t === 'close') head.close = true;
    else if (t === 'keep-alive') head.close &&= !http10;
    else if (t) (dropNamed ??= []).push(t);
  }
  return dropNamed;
}
