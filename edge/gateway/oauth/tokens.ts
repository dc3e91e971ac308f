// The facade's self-contained tokens. Nothing about a flow is stored: what the gateway must
// recover later travels inside a value it minted.
//   - consent tickets and upstream `state` values are HMAC-SHA256 signed (their content is not
//     secret: the client's redirect_uri, state and PKCE challenge);
//   - authorization codes and refresh-token envelopes are AES-256-GCM encrypted, because they
//     carry upstream tokens.
// Keys are derived (HKDF) from GATEWAY_STATE_SECRET, one per purpose. Several secrets may be
// configured: the first signs and encrypts, all verify and decrypt (rotation without breaking
// flows in progress or refresh tokens already handed out).
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

type Purpose = 'consent' | 'state' | 'client' | 'code' | 'refresh' | 'pkce';

interface KeySet {
  /** 6 base64url characters naming the secret a token was made with. */
  kid: string;
  keys: Record<Purpose, Buffer>;
}

export interface FacadeCrypto {
  sign(purpose: 'consent' | 'state' | 'client', payload: object): string;
  /** The payload of a token this gateway signed for `purpose`, or undefined. Expiry is the caller's. */
  verify<T>(purpose: 'consent' | 'state' | 'client', token: string): T | undefined;
  seal(purpose: 'code' | 'refresh', payload: object): string;
  open<T>(purpose: 'code' | 'refresh', token: string): T | undefined;
  /** The gateway's PKCE verifier toward the upstream for a flow, derived from its nonce. */
  upstreamVerifier(nonce: string): string;
}

const PREFIX: Record<'code' | 'refresh', string> = { code: 'mgc1.', refresh: 'mgr1.' };

export function createFacadeCrypto(secrets: string[]): FacadeCrypto {
  if (secrets.length === 0) throw new Error('the OAuth facade needs at least one secret');
  const sets: KeySet[] = secrets.map(deriveKeys);
  const byKid = new Map(sets.map((s) => [s.kid, s]));
  const current = sets[0];

  return {
    sign(purpose, payload) {
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      const head = `${current.kid}.${body}`;
      return `${head}.${mac(current.keys[purpose], head)}`;
    },
    verify<T>(purpose: 'consent' | 'state' | 'client', token: string): T | undefined {
      if (typeof token !== 'string' || token.length > 8_192) return undefined;
      const parts = token.split('.');
      if (parts.length !== 3) return undefined;
      const set = byKid.get(parts[0]);
      if (!set) return undefined;
      const expected = Buffer.from(mac(set.keys[purpose], `${parts[0]}.${parts[1]}`));
      const given = Buffer.from(parts[2]);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        const value = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
        return value && typeof value === 'object' ? (value as T) : undefined;
      } catch {
        return undefined;
      }
    },
    seal(purpose, payload) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.keys[purpose], iv);
      cipher.setAAD(Buffer.from(purpose));
      const kid = Buffer.from(current.kid, 'base64url');
      const sealed = Buffer.concat([cipher.update(deflateRawSync(Buffer.from(JSON.stringify(payload)))), cipher.final()]);
      return PREFIX[purpose] + Buffer.concat([kid, iv, sealed, cipher.getAuthTag()]).toString('base64url');
    },
    open<T>(purpose: 'code' | 'refresh', token: string): T | undefined {
      if (typeof token !== 'string' || !token.startsWith(PREFIX[purpose]) || token.length > 65_536) return undefined;
      const raw = Buffer.from(token.slice(PREFIX[purpose].length), 'base64url');
      if (raw.length < 4 + 12 + 16 + 1) return undefined;
      const set = byKid.get(raw.subarray(0, 4).toString('base64url').slice(0, 6));
      if (!set) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', set.keys[purpose], raw.subarray(4, 16));
        decipher.setAAD(Buffer.from(purpose));
        decipher.setAuthTag(raw.subarray(raw.length - 16));
        const plain = Buffer.concat([decipher.update(raw.subarray(16, raw.length - 16)), decipher.final()]);
        const value = JSON.parse(inflateRawSync(plain, { maxOutputLength: 1_048_576 }).toString('utf8'));
        return value && typeof value === 'object' ? (value as T) : undefined;
      } catch {
        return undefined;
      }
    },
    upstreamVerifier(nonce) {
      // 32 bytes → 43 base64url characters: a valid RFC 7636 verifier.
      return createHmac('sha256', current.keys.pkce).update(nonce).digest('base64url');
    },
  };
}

function deriveKeys(secret: string): KeySet {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', secret, 'mindgate-gateway-facade', info, 32));
  // 4 bytes, written as 6 base64url characters (both forms are used: text in signed tokens, bytes in sealed ones).
  const kid = Buffer.from(derive('key-id').subarray(0, 4)).toString('base64url').slice(0, 6);
  return {
    kid,
    keys: {
      consent: derive('consent'),
      state: derive('state'),
      client: derive('client'),
      code: derive('code'),
      refresh: derive('refresh'),
      pkce: derive('pkce'),
    },
  };
}

function mac(key: Buffer, data: string): string {
  return createHmac('sha256', key).update(data).digest('base64url');
}

/** A random URL-safe identifier (nonces, jti, browser binding). */
export function randomId(bytes = 16): string {
  return randomBytes(bytes).toString('base64url');
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** A short, non-reversible digest (browser binding cookie → value bound into tokens). */
export function bindingDigest(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}
