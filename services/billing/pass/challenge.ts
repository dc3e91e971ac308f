// Challenges of the Payment HTTP authentication scheme for the brain-pass, bound statelessly:
// `id = base64url(HMAC-SHA256(secret, realm|method|intent|request|expires|digest|opaque))`, so a
// challenge needs no storage until someone pays it, and one altered in any bound field (a lower
// amount, a later expiry) no longer matches its id. `request` is the RFC 8785 canonical JSON of
// {amount, currency, recipient}, base64url without padding.
import { createHmac, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { PaymentChallenge } from '../../../gen/mindgate/billing/v1/brain_pass_pb.js';

export const REALM = 'mindgate';
export const INTENT = 'charge';

export interface ChargeRequest {
  /** Minor units, as a decimal string (the scheme's convention). */
  amount: string;
  /** Lower-case ISO 4217. */
  currency: string;
  recipient: string;
}

export type ChallengeFields = Pick<PaymentChallenge, 'realm' | 'method' | 'intent' | 'request' | 'expires' | 'digest' | 'opaque'>;

export function encodeRequest(request: ChargeRequest): string {
  return Buffer.from(canonicalize(request) as string, 'utf8').toString('base64url');
}

/** The request of a challenge, or undefined when it is not base64url of canonical JSON of that shape. */
export function decodeRequest(encoded: string): ChargeRequest | undefined {
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(encoded)) return undefined;
  try {
    const value = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as ChargeRequest;
    const shaped = typeof value?.amount === 'string' && typeof value.currency === 'string' && typeof value.recipient === 'string';
    return shaped && encodeRequest(value) === encoded ? value : undefined;
  } catch {
    return undefined;
  }
}

export function challengeId(secret: string, f: ChallengeFields): string {
  const bound = [f.realm, f.method, f.intent, f.request, f.expires, f.digest, f.opaque].join('|');
  return createHmac('sha256', secret).update(bound, 'utf8').digest('base64url');
}

/** Whether the challenge's id is the one this secret gives its fields, compared in constant time. */
export function isBound(secret: string, challenge: ChallengeFields & { id: string }): boolean {
  const expected = Buffer.from(challengeId(secret, challenge), 'utf8');
  const given = Buffer.from(challenge.id, 'utf8');
  // Unequal lengths cannot match; timingSafeEqual needs equal ones, so compare against itself.
  return timingSafeEqual(expected, given.length === expected.length ? given : expected) && given.length === expected.length;
}
