// The extractor port: finds relationships in a memory's text. The model-free pattern extractor
// (patterns.ts) is the default and always runs; a model extractor (openai-chat.ts) may be added
// where an OpenAI-compatible chat endpoint is configured.
import type { CitationOrigin } from '../../../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { KindName } from '../vocabulary.ts';

export interface ExtractInput {
  text: string;
  /** Names the memory is about: found in the text before any guess is made. */
  entities: string[];
}

export interface Extracted {
  subject: string;
  predicate: string;
  object: string;
  subjectKind: KindName;
  objectKind: KindName;
  /** The sentence it was read from. */
  sentence: string;
  origin: CitationOrigin;
}

export interface RelationshipExtractor {
  readonly name: string;
  extract(input: ExtractInput): Promise<Extracted[]>;
}
