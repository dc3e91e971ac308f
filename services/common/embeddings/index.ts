// Chooses the embedder from configuration: USE-lite in worker threads by default, or an
// OpenAI-compatible endpoint when EMBEDDINGS_URL is set. Both factories resolve only once the
// embedder is usable (the model loaded in every worker, or the endpoint answered a probe), so a
// broken setup fails at startup rather than on the first request.

import type { EmbeddingsConfig } from '../config.ts';
import type { Embedder } from './interface.ts';
import { createOpenAiEmbedder } from './openai.ts';
import { createUseLiteEmbedder } from './use-lite.ts';

export type { Embedder } from './interface.ts';
export { createOpenAiEmbedder, EmbeddingsError, embeddingsEndpoint } from './openai.ts';
export { createUseLiteEmbedder, MAX_INPUT_CHARS, USE_LITE_DIMENSIONS, USE_LITE_MODEL } from './use-lite.ts';

export async function createEmbedder(config: EmbeddingsConfig): Promise<Embedder> {
  if (config.provider === 'openai') {
    if (!config.url) throw new Error('the openai embeddings provider needs a URL (EMBEDDINGS_URL)');
    return createOpenAiEmbedder({ url: config.url, model: config.model, apiKey: config.apiKey });
  }
  return createUseLiteEmbedder({ threads: config.threads });
}
