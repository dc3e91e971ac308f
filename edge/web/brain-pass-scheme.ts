// The Payment HTTP authentication scheme on the wire (draft-httpauth-payment, the Machine Payments
// Protocol): challenges as `WWW-Authenticate: Payment` auth-params, the `Authorization: Payment`
// credential (base64url without padding of JSON {challenge, source?, payload}), the receipt, and
// the scheme's problem types. What the fields mean and how they are verified is the billing
// service's (services/billing/handlers/brain-pass.ts).
import type { PaymentChallenge } from '../../gen/mindgate/billing/v1/brain_pass_pb.js';

export const PROBLEM_BASE = 'https://paymentauth.org/problems/';

/** The scheme's problems: status and title by type name. */
export const PAYMENT_PROBLEMS = {
  'payment-required': { status: 402, title: 'Payment Required' },
  'malformed-credential': { status: 402, title: 'Malformed Credential' },
  'invalid-challenge': { status: 402, title: 'Invalid Challenge' },
  'verification-failed': { status: 402, title: 'Verification Failed' },
  'payment-expired': { status: 402, title: 'Payment Expired' },
  'method-unsupported': { status: 400, title: 'Method Unsupported' },
} as const;

export type PaymentProblem = keyof typeof PAYMENT_PROBLEMS;

/** The billing service's failure reasons (services/common/rpc/reasons.ts) as the scheme's problems. */
export const PROBLEM_BY_REASON: Record<string, PaymentProblem> = {
  'payment-malformed-credential': 'malformed-credential',
  'payment-invalid-challenge': 'invalid-challenge',
  'payment-verification-failed': 'verification-failed',
  'payment-expired': 'payment-expired',
  'payment-method-unsupported': 'method-unsupported',
};

/** An auth-param value as a quoted-string (RFC 9110 §5.6.4). */
const quoted = (value: string) => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

export function formatChallenge(c: PaymentChallenge): string {
  const params: [string, string][] = [
    ['id', c.id],
    ['realm', c.realm],
    ['method', c.method],
    ['intent', c.intent],
    ['request', c.request],
    ['expires', c.expires],
  ];
  if (c.digest) params.push(['digest', c.digest]);
  if (c.description) params.push(['description', c.description]);
  if (c.opaque) params.push(['opaque', c.opaque]);
  return `Payment ${params.map(([k, v]) => `${k}=${quoted(v)}`).join(', ')}`;
}

export interface Credential {
  challenge: Pick<PaymentChallenge, 'id' | 'realm' | 'method' | 'intent' | 'request' | 'expires' | 'digest' | 'opaque'>;
  source: string;
  payload: unknown;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * The credential of `Authorization: Payment <token>`; undefined when the header is not of the Payment
 * scheme at all, null when it is but cannot be decoded.
 */
export function parseCredential(header: string | undefined): Credential | null | undefined {
  const match = /^Payment\s+(\S*)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const token = match[1];
  if (!/^[A-Za-z0-9_-]{1,16384}$/.test(token)) return null;
  let json: { challenge?: Record<string, unknown>; source?: unknown; payload?: unknown };
  try {
    json = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const c = json?.challenge;
  if (typeof c !== 'object' || c === null || json.payload === undefined) return null;
  const fields = ['id', 'realm', 'method', 'intent', 'request', 'expires'].map((k) => str(c[k]));
  if (fields.some((f) => f === undefined)) return null;
  const [id, realm, method, intent, request, expires] = fields as string[];
  return {
    challenge: { id, realm, method, intent, request, expires, digest: str(c.digest) ?? '', opaque: str(c.opaque) ?? '' },
    source: str(json.source) ?? '',
    payload: json.payload,
  };
}

/** The credential a client sends for a challenge (what an agent does; the tests use it too). */
export function encodeCredential(challenge: Record<string, string>, payload: unknown, source?: string): string {
  return Buffer.from(JSON.stringify({ challenge, ...(source ? { source } : {}), payload })).toString('base64url');
}

/** The challenges of a `WWW-Authenticate` header value list, as auth-param maps (for clients and tests). */
export function parseChallenges(values: string[]): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  for (const value of values) {
    for (const part of value.split(/,\s*(?=Payment\s)/)) {
      const m = /^Payment\s+(.*)$/s.exec(part.trim());
      if (!m) continue;
      const params: Record<string, string> = {};
      for (const p of m[1].matchAll(/([a-z]+)="((?:[^"\\]|\\.)*)"/g)) params[p[1]] = p[2].replace(/\\(.)/g, '$1');
      out.push(params);
    }
  }
  return out;
}

export function encodeReceipt(receipt: { method: string; timestamp: string; reference: string }): string {
  return Buffer.from(JSON.stringify({ status: 'success', ...receipt })).toString('base64url');
}
