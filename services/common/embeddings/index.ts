// Chooses the embedder from configuration: USE-lite in worker threads by default, or an
// OpenAI-compatible endpoint when EMBEDDINGS_URL is set. Both factories resolve only once the
// embedder is usable (the model loaded in every worker, or the endpoint answered a probe), so a
// broken setup fails at startup rather than on the first request.

import type { EmbeddingsConfig } from '../config.ts';
import { StoreUnavailableError } from '../storage/unavailable.ts';
import type { Embedder } from './interface.ts';
import { createOpenAiEmbedder, isEmbeddingsOutage } from './openai.ts';
import { createUseLiteEmbedder } from './use-lite.ts';

export type { Embedder } from './interface.ts';
export { createOpenAiEmbedder, EmbeddingsError, embeddingsEndpoint, isEmbeddingsOutage } from './openai.ts';
export { createUseLiteEmbedder, MAX_INPUT_CHARS, USE_LITE_DIMENSIONS, USE_LITE_MODEL } from './use-lite.ts';

export async function createEmbedder(config: EmbeddingsConfig): Promise<Embedder> {
  if (config.provider === 'openai') {
    if (!config.url) throw new Error('the openai embeddings provider needs a URL (EMBEDDINGS_URL)');
    return outagesAsUnavailable(await createOpenAiEmbedder({ url: config.url, model: config.model, apiKey: config.apiKey }));
  }
  return createUseLiteEmbedder({ threads: config.threads });
}

/**
 * Once running, an endpoint that does not answer (or answers 408, 429 or 5xx) after the
 * embedder's own retries is a store outage like MongoDB's or Qdrant's: the services answer
 * UNAVAILABLE, which clients retry, instead of an internal error (services/common/rpc/interceptors.ts).
 */
function outagesAsUnavailable(embedder: Embedder): Embedder {
  return {
    kind: embedder.kind,
    model: embedder.model,
    dimensions: embedder.dimensions,
    embed: (texts) =>
      embedder.embed(texts).catch((err: unknown) => {
        throw isEmbeddingsOutage(err) ? new StoreUnavailableError('embeddings', (err as Error).message, { cause: err }) : err;
      }),
    close: () => embedder.close(),
  };
}
