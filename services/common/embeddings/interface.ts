// The embeddings port: turns texts into unit-length sentence vectors.

export interface Embedder {
  /** `use-lite` (the offline default) or `openai` (any OpenAI-compatible endpoint). */
  readonly kind: string;
  readonly model: string;
  /** Known when the factory resolves (the OpenAI-compatible one probes the endpoint if needed). */
  readonly dimensions: number;
  /**
   * Embeds each text; the result has one L2-normalised vector per input, in order. Never blocks
   * the calling thread for the duration of a model run. An empty list gives an empty list; a
   * blank text is embedded as one space; a text past the implementation's limit is cut there
   * (USE-lite: 2,000 characters). Rejects a non-string input with a TypeError.
   */
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}

/** What `embed` rejects with once `close` was called: the process is stopping, nothing failed. */
export class EmbedderClosedError extends Error {
  constructor(kind: string) {
    super(`the ${kind} embedder is closed`);
    this.name = 'EmbedderClosedError';
  }
}
