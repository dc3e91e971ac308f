import path from 'node:path';
import { loadSecretFile } from '../../../services/common/secret-file.ts';

/**
 * The facade's secrets: GATEWAY_STATE_SECRET when configured, otherwise one generated once and
 * kept (mode 0600) in `${dataDir}/gateway-state-secret`. Replicas that do not share a data
 * directory must configure the same GATEWAY_STATE_SECRET, or a flow started on one replica fails
 * on another.
 */
export function resolveStateSecrets(configured: string[], dataDir: string): string[] {
  if (configured.length > 0) return configured;
  return [loadSecretFile(path.join(dataDir, 'gateway-state-secret'), { minLength: 32, generate: true })];
}
