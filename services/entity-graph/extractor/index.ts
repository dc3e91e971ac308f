// The extractor a deployment runs: the patterns always, and a model beside them where configured.
import type { Logger } from '../../common/log.ts';
import type { EntityGraphConfig } from '../config.ts';
import { combineExtractors } from './combined.ts';
import type { RelationshipExtractor } from './interface.ts';
import { createChatExtractor } from './openai-chat.ts';
import { createPatternExtractor } from './patterns.ts';

export function createExtractor(config: EntityGraphConfig, logger: Logger): RelationshipExtractor {
  const patterns = createPatternExtractor();
  return config.extractor ? combineExtractors([patterns, createChatExtractor(config.extractor)], logger) : patterns;
}
