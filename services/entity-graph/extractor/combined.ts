// Several extractors as one: their findings together, the first one's kept where two find the
// same relationship. One failing (a model endpoint down, too slow) costs only its own findings.
import type { Logger } from '../../common/log.ts';
import type { Extracted, RelationshipExtractor } from './interface.ts';

export function combineExtractors(extractors: RelationshipExtractor[], logger: Logger): RelationshipExtractor {
  return {
    name: extractors.map((e) => e.name).join('+'),
    async extract(input) {
      const results = await Promise.allSettled(extractors.map((e) => e.extract(input)));
      const out: Extracted[] = [];
      const seen = new Set<string>();
      results.forEach((result, i) => {
        if (result.status === 'rejected') {
          logger.warn(
            { err: result.reason, extractor: extractors[i].name },
            'relationship extractor failed; its findings are left out of this write',
          );
          return;
        }
        for (const r of result.value) {
          const key = `${r.subject.toLowerCase()}\u0000${r.predicate}\u0000${r.object.toLowerCase()}`;
          if (seen.has(key)) continue;
          seen.add(key);
          out.push(r);
        }
      });
      return out;
    },
  };
}
