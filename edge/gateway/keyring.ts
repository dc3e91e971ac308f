// The operator keys the proxy accepts in X-Gateway-Key: those of GATEWAY_KEYS, and those created
// through the Agents API, known here only by their SHA-256 (polled by registry-sync.ts; a key
// rotated with an overlap has two hashes until the overlap ends). Every check compares against
// every key, in constant time, so that neither the key nor which key matched shows in the timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { GatewayKeyDigest } from '../../gen/mindgate/agents/v1/gateway_registry_pb.js';
import { timestampMs } from '@bufbuild/protobuf/wkt';

export interface GatewayKeyring {
  /** True when `given` is a configured key or a live stored one. */
  isValid(given: string): boolean;
  /** Replaces the stored keys' hashes. */
  replaceStored(digests: GatewayKeyDigest[]): void;
  /** False when no key at all is accepted (then every X-Gateway-Key is refused without hashing). */
  readonly any: boolean;
}

interface StoredHash {
  hash: Buffer;
  /** Epoch ms after which this hash no longer works (a replaced secret's overlap); Infinity for the current one. */
  until: number;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest();

export function createGatewayKeyring(configured: string[], now: () => number = Date.now): GatewayKeyring {
  // Configured keys are compared by their digests too: equal lengths, so timingSafeEqual applies.
  const fixed = configured.map(sha256);
  let stored: StoredHash[] = [];
  return {
    get any() {
      return fixed.length + stored.length > 0;
    },
    isValid(given) {
      const digest = sha256(given);
      const at = now();
      let ok = false;
      for (const hash of fixed) ok = timingSafeEqual(digest, hash) || ok;
      for (const s of stored) ok = (timingSafeEqual(digest, s.hash) && s.until > at) || ok;
      return ok;
    },
    replaceStored(digests) {
      const next: StoredHash[] = [];
      for (const d of digests) {
        next.push({ hash: Buffer.from(d.secretSha256, 'hex'), until: Number.POSITIVE_INFINITY });
        if (d.previousSecretSha256 && d.previousExpireTime) {
          next.push({ hash: Buffer.from(d.previousSecretSha256, 'hex'), until: timestampMs(d.previousExpireTime) });
        }
      }
      stored = next.filter((s) => s.hash.length === 32);
    },
  };
}
