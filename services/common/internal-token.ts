import path from 'node:path';
import { loadSecretFile } from './secret-file.ts';

/**
 * The internal credential: INTERNAL_TOKEN when configured, otherwise a random token generated
 * once and kept (mode 0600) in `${dataDir}/internal-token`, so that the edge and services
 * started from the same data directory agree and an operator can read it for grpcurl.
 */
export function resolveInternalToken(configured: string | undefined, dataDir: string): string {
  return configured ?? loadSecretFile(path.join(dataDir, 'internal-token'), { minLength: 32, generate: true });
}
