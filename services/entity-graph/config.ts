// The entity-graph service's settings (README.md, "Entity graph"): the optional model extractor.
import { readInt, readString, readUrl, type Env } from '../common/config.ts';

export interface EntityGraphConfig {
  /** An OpenAI-compatible chat endpoint for the model extractor; unset: patterns only (offline). */
  extractor?: { url: string; model: string; apiKey?: string; timeoutMs: number };
}

export function readEntityGraphConfig(env: Env): EntityGraphConfig {
  const url = readUrl(env, 'GRAPH_EXTRACTOR_URL');
  if (!url) return {};
  return {
    extractor: {
      url,
      model: readString(env, 'GRAPH_EXTRACTOR_MODEL', 'gpt-4o-mini'),
      apiKey: readString(env, 'GRAPH_EXTRACTOR_API_KEY'),
      timeoutMs: readInt(env, 'GRAPH_EXTRACTOR_TIMEOUT_MS', 10_000, { min: 100, max: 120_000 }),
    },
  };
}
