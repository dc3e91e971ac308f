// The webhooks' records, owned by the agents service: endpoints (with their sealed signing
// secrets), the events published to them, one delivery per event and endpoint with every attempt,
// each endpoint's failure streak, the per-endpoint concurrency slots and the monthly counts.
import type { RecordCollection, RecordDoc, RecordStore } from '../../common/storage/records/interface.ts';

/** How long events, deliveries and attempts are kept for the delivery log (and redelivery). */
export const LOG_KEPT_MS = 30 * 86_400_000;

export interface SecretRecord {
  /** The secret sealed under the key-encryption key (context: the endpoint's). */
  sealed: string;
  /** Its first characters, to recognise it. */
  prefix: string;
  createdAt: number;
  /** Set when a rotation replaced it: it signs until then. */
  expiresAt?: number;
}

export interface EndpointRecord extends RecordDoc {
  organizationId: string;
  url: string;
  eventTypes: string[];
  description: string;
  enabled: boolean;
  disabledReason?: 'failing';
  /** Newest first; the first is the current secret. */
  secrets: SecretRecord[];
  createdBy: string;
  createdAt: number;
  updatedAt: number;
  version: number;
}

export interface EventRecord extends RecordDoc {
  organizationId: string;
  type: string;
  time: number;
  /** The request body every attempt sends, exactly as signed. */
  body: string;
  /** `new` until its deliveries are queued (a publish cut short is finished by its retry). */
  state: 'new' | 'published' | 'dropped';
}

export interface DeliveryRecord extends RecordDoc {
  organizationId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  eventTime: number;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  /** Attempts made before the last (re)delivery: maxAttempts counts from here. */
  attemptBase: number;
  /** Pending only: when the next attempt may start, or when the claim on the current one ends. */
  dueAt?: number;
  leaseOwner?: string;
  lastStatusCode?: number;
  lastError?: string;
  /** A test event: delivered even to a disabled endpoint. */
  test?: boolean;
  createdAt: number;
  completedAt?: number;
  version: number;
}

export interface AttemptRecord extends RecordDoc {
  deliveryId: string;
  organizationId: string;
  number: number;
  startedAt: number;
  url: string;
  requestHeaders: Record<string, string>;
  responseStatus: number;
  responseBody: string;
  latencyMs: number;
  error: string;
}

/** `_id` is the endpoint's: attempts failed in a row, since when. Deleted by a success. */
export interface StreakRecord extends RecordDoc {
  failures: number;
  since: number;
}

/** `_id` is `{endpoint id}#{n}`: one of the endpoint's concurrency slots, held until `until`. */
export interface SlotRecord extends RecordDoc {
  owner: string;
  until: number;
}

/** `_id` is `{organization id}|{YYYY-MM}`. */
export interface UsageRecord extends RecordDoc {
  published?: number;
  dropped?: number;
}

export interface WebhookCollections {
  endpoints: RecordCollection<EndpointRecord>;
  events: RecordCollection<EventRecord>;
  deliveries: RecordCollection<DeliveryRecord>;
  attempts: RecordCollection<AttemptRecord>;
  streaks: RecordCollection<StreakRecord>;
  /** `_id` is the endpoint's: its last success (`at`). */
  successes: RecordCollection<RecordDoc & { at: number }>;
  slots: RecordCollection<SlotRecord>;
  usage: RecordCollection<UsageRecord>;
}

export function openWebhookCollections(records: RecordStore): WebhookCollections {
  return {
    endpoints: records.collection<EndpointRecord>('webhook_endpoints', { indexes: [{ fields: ['organizationId', 'createdAt'] }] }),
    events: records.collection<EventRecord>('webhook_events'),
    deliveries: records.collection<DeliveryRecord>('webhook_deliveries', {
      indexes: [
        // The queue: only pending deliveries hold the field.
        { fields: ['dueAt'] },
        { fields: ['organizationId', 'createdAt'] },
        { fields: ['endpointId', 'status', 'eventTime'] },
      ],
    }),
    attempts: records.collection<AttemptRecord>('webhook_attempts', { indexes: [{ fields: ['deliveryId', 'number'] }] }),
    streaks: records.collection<StreakRecord>('webhook_endpoint_streaks'),
    successes: records.collection('webhook_endpoint_successes'),
    slots: records.collection<SlotRecord>('webhook_endpoint_slots'),
    usage: records.collection<UsageRecord>('webhook_usage'),
  };
}
