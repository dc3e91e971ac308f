// Standard Webhooks signatures (standardwebhooks.com, spec 1.0.0): a secret is `whsec_` and the
// base64 of random bytes; the signature of a message is HMAC-SHA256, keyed with those bytes, over
// `{webhook-id}.{webhook-timestamp}.{body}`, sent as `v1,{base64}`, one per secret, space-separated,
// so a receiver holding either secret of a rotation accepts the message.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 24 random bytes (192 bits). */
export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The webhook-signature header: one v1 signature per secret. */
export function signatures(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => signature(s, id, timestamp, body)).join(' ');
}

/** The request body of an event (Standard Webhooks' payload shape). */
export function eventBody(type: string, time: number, data: unknown): string {
  return JSON.stringify({ type, timestamp: new Date(time).toISOString(), data });
}
