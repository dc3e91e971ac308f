// Sealing again at start: every process that keeps secrets sealed under the key-encryption key
// (the edge, the agents service) seals again, under the current key, the records it finds sealed
// under a previous key (a rotation) or in clear (a version before the key existed), before it
// serves. Each owner describes its records (SealedRecords); the walk, the compare-and-set and the
// start line are here, once. Opening each record on the way also proves the configured keys are
// the right ones: a record no configured key opens stops the start with KeyEncryptionError.
//
// Replicas starting at once are safe: a record is written with a compare-and-set on the fields it
// was read with, and the new record changes those fields (a version, the envelope itself), so of
// two replicas resealing one record exactly one writes it, and a writer that read the record
// before it was sealed again fails its own compare-and-set, reads again, and keeps the new
// envelope. A lost compare-and-set reads the record again and seals it only if it is still stale.
import type { KeyEncryption } from './key-encryption.ts';
import type { Logger } from './log.ts';
import type { Filter, RecordCollection, RecordDoc, Scalar } from './storage/records/interface.ts';

const PAGE = 500;

export interface SealedRecords<T extends RecordDoc = RecordDoc> {
  collection: RecordCollection<T>;
  /** Narrows the walk to records that may be stale (say, by the key id they record); all when absent. */
  filter?: Filter;
  /**
   * The record with every secret in it sealed under the current key, or undefined when it is
   * current already. Throws KeyEncryptionError when no configured key opens a secret.
   */
  reseal(doc: T): T | undefined;
  /**
   * The fields the write is conditional on, as read. The record reseal returns must differ in
   * one of them, so that a concurrent writer holding the old record fails its own condition.
   */
  expect(doc: T): Record<string, Scalar>;
  /** Called once after `count` (> 0) of these records were written: readers that poll a version learn of it. */
  written?(count: number): Promise<void>;
}

/** The envelope sealed under the current key: itself when it is, else opened and sealed again. */
export function resealEnvelope(kek: KeyEncryption, envelope: string, context: string): string {
  return kek.isStale(envelope) ? kek.seal(kek.open(envelope, context), context) : envelope;
}

/** Seals one record again; true when this process wrote it. */
async function resealOne<T extends RecordDoc>(set: SealedRecords<T>, read: T): Promise<boolean> {
  let doc: T | undefined = read;
  while (doc) {
    const next = set.reseal(doc);
    if (!next) return false;
    if (await set.collection.put(next, { expect: set.expect(doc) })) return true;
    // Changed meanwhile: by another replica sealing it (now current), or by a write to keep.
    doc = await set.collection.get(doc._id);
  }
  return false;
}

async function resealCollection<T extends RecordDoc>(set: SealedRecords<T>): Promise<number> {
  let count = 0;
  let after = '';
  for (;;) {
    const page = await set.collection.find({ ...set.filter, _id: { $gt: after } }, { limit: PAGE });
    for (const doc of page) if (await resealOne(set, doc)) count += 1;
    if (page.length < PAGE) break;
    after = page[page.length - 1]!._id;
  }
  if (count > 0) await set.written?.(count);
  return count;
}

/** Seals again, under the current key, every stale record of `sets`; returns how many this process wrote. */
export async function resealRecords(sets: SealedRecords[]): Promise<number> {
  let count = 0;
  for (const set of sets) count += await resealCollection(set);
  return count;
}

/**
 * The start line of an owner of sealed records: the key id in use and how many records this
 * start sealed again. An operator rotating the key reads it to know when the previous key is no
 * longer needed (0 under the new key id, from every owner).
 */
function logSealing(logger: Logger, owner: 'edge' | 'agents', kek: KeyEncryption, resealed: number): void {
  logger.info(
    { sealedBy: owner, keyId: kek.keyId, resealed },
    `${owner}: stored secrets are sealed under key-encryption key ${kek.keyId} (${resealed} sealed again at this start)`,
  );
}

/** Re-seals `sets` and logs the start line; what an owner of sealed records runs at start. */
export async function resealAtStart(logger: Logger, owner: 'edge' | 'agents', kek: KeyEncryption, sets: SealedRecords[]): Promise<number> {
  const resealed = await resealRecords(sets);
  logSealing(logger, owner, kek, resealed);
  return resealed;
}
