import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The facade's secrets: GATEWAY_STATE_SECRET when configured, otherwise one generated once and
 * kept (mode 0600) in `${dataDir}/gateway-state-secret`. Replicas that do not share a data
 * directory must configure the same GATEWAY_STATE_SECRET, or a flow started on one replica fails
 * on another.
 */
export function resolveStateSecrets(configured: string[], dataDir: string): string[] {
  if (configured.length > 0) return configured;
  const file = path.join(dataDir, 'gateway-state-secret');
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return [existing];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    fs.writeFileSync(file, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return [secret];
  } catch (err) {
    // Another process created it between our read and write: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return [fs.readFileSync(file, 'utf8').trim()];
    throw err;
  }
}
