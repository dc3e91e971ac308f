// Settings of the public Web API and site ({web_url}).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, readInt, readString, type Env } from '../../services/common/config.ts';
import { parseProxyEntry } from '../http/client-ip.ts';

export interface WebConfig {
  /** Folder with `site.yaml`, `pages/*.md` and `blog/*.md`. */
  contentDir: string;
  /**
   * Proxies whose X-Forwarded-For is believed (IPs or CIDRs). Empty: the client is the socket's
   * peer address.
   */
  trustedProxies: string[];
  /** How long a measured platform status is reused. */
  statusCacheMs: number;
  /** Deadline of each health check behind the status endpoint. */
  statusTimeoutMs: number;
  /** A component answering slower than this is `degraded`. */
  statusSlowMs: number;
}

/** The repository's own content folder, wherever the process was started from. */
const DEFAULT_CONTENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../content');

export function readTrustedProxies(env: Env, name: string): string[] {
  const value = readString(env, name);
  if (!value) return [];
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const entry of entries) {
    if (!parseProxyEntry(entry)) {
      throw new ConfigError(name, `expected comma-separated IP addresses or CIDR blocks, got "${entry}"`);
    }
  }
  return entries;
}

export function readWebConfig(env: Env): WebConfig {
  return {
    contentDir: path.resolve(readString(env, 'WEB_CONTENT_DIR', DEFAULT_CONTENT_DIR)),
    trustedProxies: readTrustedProxies(env, 'TRUSTED_PROXIES'),
    statusCacheMs: readInt(env, 'WEB_STATUS_CACHE_MS', 5_000, { min: 0, max: 300_000 }),
    statusTimeoutMs: readInt(env, 'WEB_STATUS_TIMEOUT_MS', 2_000, { min: 50, max: 60_000 }),
    statusSlowMs: readInt(env, 'WEB_STATUS_SLOW_MS', 1_000, { min: 1, max: 60_000 }),
  };
}
