// A key-encryption key file as an operator writes one (KEY_ENCRYPTION_KEY_FILE): a random key,
// owner-only. Its key id is what the platform records beside every secret it seals with it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createKeyEncryption } from '../../services/common/key-encryption.ts';

export function writeKeyEncryptionKey(dir: string, name = 'kek'): { file: string; id: string } {
  const file = path.join(dir, name);
  const text = randomBytes(32).toString('base64url');
  fs.writeFileSync(file, `${text}\n`, { mode: 0o600 });
  return { file, id: createKeyEncryption([text]).keyId };
}
