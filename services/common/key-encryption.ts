// The key-encryption key (KEK): secrets kept in a records store (the authorization server's
// signing and cookie keys, confidential clients' secrets) are sealed under it with AES-256-GCM,
// so that a copy of the database or a MongoDB dump alone does not yield them. The KEK lives in a
// file outside the store (a 0600 file in DATA_DIR by default, a mounted Secret in the chart).
//
// Envelope: `kek1.<key id>.<iv>.<ciphertext>.<tag>`, base64url parts. The key id names the KEK an
// envelope was sealed with, so a rotation can keep the previous KEK for opening while sealing
// with the new one, and a wrong KEK is reported as such instead of failing as a bad tag. The
// caller's context (collection and record) is the additional authenticated data: an envelope
// copied to another record does not open there.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { loadSecretFile } from './secret-file.ts';

const PREFIX = 'kek1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** A KEK file holds at least this many characters; a generated one is 32 random bytes, base64url. */
export const KEK_MIN_LENGTH = 32;

export interface KeyEncryptionConfig {
  /** The KEK that seals, and opens what it sealed. */
  file: string;
  /** Generate `file` (0600) when it is absent: true for the default path in DATA_DIR. */
  generate: boolean;
  /** A KEK being rotated out: envelopes sealed with it still open, and are re-sealed. */
  previousFile?: string;
}

/** An envelope that cannot be opened with the configured keys; the message says why, never what. */
export class KeyEncryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyEncryptionError';
  }
}

export interface KeyEncryption {
  /** Id of the KEK new envelopes are sealed with (not secret: derived one-way from the key). */
  readonly keyId: string;
  seal(plaintext: string, context: string): string;
  open(envelope: string, context: string): string;
  /** True when `envelope` was sealed with a KEK other than the current one. */
  isStale(envelope: string): boolean;
}

interface Kek {
  id: string;
  key: Buffer;
}

/** The AES key and its id, both derived from the file's text, so any high-entropy text serves. */
function deriveKek(secret: string): Kek {
  const derive = (info: string, bytes: number) => Buffer.from(hkdfSync('sha256', secret, 'mindgate', info, bytes));
  return { id: derive('mindgate key-encryption-key id', 6).toString('base64url'), key: derive('mindgate key-encryption-key v1', 32) };
}

/** Seals with the first secret; opens with any of them. */
export function createKeyEncryption(secrets: string[]): KeyEncryption {
  const keys = secrets.map(deriveKek);
  const [current] = keys;
  if (!current) throw new Error('createKeyEncryption needs at least one secret');
  const b64 = (b: Buffer) => b.toString('base64url');
  const parse = (envelope: string) => {
    const parts = envelope.split('.');
    return parts.length === 5 && parts[0] === PREFIX ? { id: parts[1], iv: parts[2], data: parts[3], tag: parts[4] } : undefined;
  };
  return {
    keyId: current.id,
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv).setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [PREFIX, current.id, b64(iv), b64(data), b64(cipher.getAuthTag())].join('.');
    },
    open(envelope, context) {
      const parsed = parse(envelope);
      if (!parsed) throw new KeyEncryptionError(`${context} is not an encrypted value`);
      const kek = keys.find((k) => k.id === parsed.id);
      if (!kek) {
        throw new KeyEncryptionError(
          `${context} was encrypted with the key-encryption key of id ${parsed.id}, but the configured key has id ${current.id}` +
            `${
              keys.length > 1
                ? ` and the previous one ${keys
                    .slice(1)
                    .map((k) => k.id)
                    .join(', ')}`
                : ''
            }: ` +
            'start with the key it was written with (KEY_ENCRYPTION_KEY_FILE), or name that key in KEY_ENCRYPTION_KEY_PREVIOUS_FILE while rotating',
        );
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', kek.key, Buffer.from(parsed.iv, 'base64url'), { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(context, 'utf8')).setAuthTag(Buffer.from(parsed.tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(parsed.data, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new KeyEncryptionError(
          `${context} does not decrypt with the key-encryption key ${kek.id}: the stored value was altered or copied from another record`,
        );
      }
    },
    isStale(envelope) {
      return parse(envelope)?.id !== current.id;
    },
  };
}

/** Reads the KEK (generating the default one when absent) and the previous one, if configured. */
export function loadKeyEncryption(config: KeyEncryptionConfig): KeyEncryption {
  const current = loadSecretFile(config.file, { minLength: KEK_MIN_LENGTH, generate: config.generate });
  const previous = config.previousFile ? [loadSecretFile(config.previousFile, { minLength: KEK_MIN_LENGTH, generate: false })] : [];
  return createKeyEncryption([current, ...previous]);
}
