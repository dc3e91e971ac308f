// Examples of the bodies of webhook endpoints, their deliveries, event types and usage, by the
// title of their schema (index.ts merges every area's).
import { AT, LATER, ORG, USER } from './common.ts';

const webhookEndpoint = {
  id: 'whe_4kT8pQ2wZr9xLm3N7bVc',
  organization_id: ORG,
  url: 'https://93.184.215.14/mindgate',
  event_types: ['memory.*', 'member.added'],
  description: 'Sync memories to the search index',
  enabled: true,
  disabled_reason: null,
  secret_prefix: 'whsec_MfKQ',
  previous_secret_expires_at: null,
  created_by: USER,
  created_at: AT,
  updated_at: AT,
  failing_since: null,
  consecutive_failures: 0,
  last_success_at: LATER,
};
const webhookDelivery = {
  id: 'dlv_9f2c4e1a7b3d5f6081a2c3d4',
  endpoint_id: 'whe_4kT8pQ2wZr9xLm3N7bVc',
  event_id: 'evt_ayf3kqmz2vx7wbn5hd4tjr6sce',
  event_type: 'memory.created',
  event_time: AT,
  status: 'succeeded',
  attempts: 2,
  next_attempt_at: null,
  last_status_code: 200,
  last_error: null,
  created_at: AT,
  completed_at: AT,
};

export const WEBHOOK_EXAMPLES: Record<string, unknown> = {
  WebhookEndpoint: webhookEndpoint,
  WebhookEndpointWithSecret: { endpoint: webhookEndpoint, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  CreateWebhookEndpoint: {
    url: 'https://93.184.215.14/mindgate',
    event_types: ['memory.*', 'member.added'],
    description: 'Sync memories to the search index',
  },
  UpdateWebhookEndpoint: { event_types: ['memory.*', 'contradiction.flagged'] },
  RotateWebhookSecret: { overlap_seconds: 3600 },
  WebhookDelivery: webhookDelivery,
  WebhookDeliveryDetail: {
    delivery: webhookDelivery,
    payload: '{"type":"memory.created","timestamp":"2026-03-02T09:30:00.000Z","data":{"namespace":"knowledge","key":"deploy/steps"}}',
    attempts: [
      {
        number: 1,
        started_at: AT,
        url: 'https://93.184.215.14/mindgate',
        request_headers: { 'webhook-id': 'evt_ayf3kqmz2vx7wbn5hd4tjr6sce', 'webhook-timestamp': '1772443800' },
        response_status: 503,
        response_body: 'busy',
        latency_ms: 41,
        error: 'HTTP 503',
      },
    ],
  },
  RedeliverWebhookRange: { since: AT, until: LATER },
  Requeued: { requeued: 3 },
  WebhookEventType: {
    type: 'memory.created',
    description: 'A memory was written under a new key.',
    schema: { type: 'object', properties: { key: { type: 'string' } } },
  },
  WebhookUsage: {
    period: { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' },
    limit: 100000,
    published: 1520,
    dropped: 0,
    dropped_reason: null,
  },
};
