// Deleting what an organization owns, a bounded batch at a time, for the services' data-deletion
// RPCs: each call finds at most `room` documents per collection (oldest collections first) and
// deletes them by id, so a call stays short however large the organization, and a call repeated
// after a crash simply finds what is left.
import { invalid } from '../../rpc/validate.ts';
import type { Filter, RecordCollection, RecordDoc } from './interface.ts';

export const DEFAULT_PURGE_BATCH = 2_000;
export const MAX_PURGE_BATCH = 10_000;
/** Ids per deleteMany, well under SQLite's bound on query parameters. */
const CHUNK = 500;

/** The batch size of a purge request (0: the default); INVALID_ARGUMENT above the maximum. */
export function purgeBatch(requested: number): number {
  if (requested > MAX_PURGE_BATCH) invalid('batch_size', `must be at most ${MAX_PURGE_BATCH}, got ${requested}`);
  return requested || DEFAULT_PURGE_BATCH;
}

export async function deleteIds(collection: RecordCollection<RecordDoc>, ids: string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < ids.length; i += CHUNK) deleted += await collection.deleteMany({ _id: { $in: ids.slice(i, i + CHUNK) } });
  return deleted;
}

/**
 * Deletes up to `batch` documents matching each filter, in order. `done` is true when a call
 * found fewer than its room: nothing matching is left.
 */
export async function purgeBatchOf(
  targets: { collection: RecordCollection<RecordDoc>; filter: Filter }[],
  batch: number,
): Promise<{ deleted: number; done: boolean }> {
  let room = batch;
  let deleted = 0;
  for (const { collection, filter } of targets) {
    if (room <= 0) break;
    const found = await collection.find(filter, { limit: room });
    deleted += await deleteIds(
      collection,
      found.map((d) => d._id),
    );
    room -= found.length;
  }
  return { deleted, done: room > 0 };
}
