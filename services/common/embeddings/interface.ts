// The embeddings port: turns texts into unit-length sentence vectors.

export interface Embedder {
  /** `use-lite` (the offline default) or `openai` (any OpenAI-compatible endpoint). */
  readonly kind: string;
  readonly model: string;
  readonly dimensions: number;
  /**
   * Embeds each text; the result has one L2-normalised vector per input, in order. Never blocks
   * the calling thread for the duration of a model run.
   */
  embed(texts: string[]): Promise<Float32Array[]>;
  close(): Promise<void>;
}
