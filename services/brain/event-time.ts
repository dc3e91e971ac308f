// Event time: when what a memory says happened or became true, as opposed to when it was written.
// A conversation imported today happened months ago; "the API runs three replicas since May" became
// true in May. Writers may give it; otherwise it is the create time. Searches filter on it and rank
// recent events higher (ranking.ts).
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import { timestampMs } from '@bufbuild/protobuf/wkt';
import { invalid } from '../common/rpc/validate.ts';
import type { MemoryRecord } from './memory-record.ts';

/** 1900-01-01 and 2200-01-01 UTC: a wider range is a unit mistake (seconds for milliseconds). */
const EARLIEST = Date.UTC(1900, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

/** The time of a timestamp field, or undefined when it is unset; INVALID_ARGUMENT out of range. */
export function optionalEventTime(field: string, value: Timestamp | undefined): number | undefined {
  if (!value) return undefined;
  const ms = timestampMs(value);
  if (!Number.isFinite(ms) || ms < EARLIEST || ms >= LATEST) invalid(field, 'must be between 1900-01-01 and 2200-01-01');
  return ms;
}

/** Validated `event_after` / `event_before` of a search or recall. */
export function eventRange(after: Timestamp | undefined, before: Timestamp | undefined): { eventAfter?: number; eventBefore?: number } {
  const eventAfter = optionalEventTime('event_after', after);
  const eventBefore = optionalEventTime('event_before', before);
  if (eventAfter !== undefined && eventBefore !== undefined && eventAfter >= eventBefore) {
    invalid('event_after', 'must be earlier than event_before');
  }
  return { eventAfter, eventBefore };
}

/** A memory's event time; memories written before event times existed use their create time. */
export function eventTimeOf(record: Pick<MemoryRecord, 'eventAt' | 'createdAt'>): number {
  return record.eventAt ?? record.createdAt;
}
