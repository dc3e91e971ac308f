import type { EventOutbox } from '../../common/events/outbox.ts';
import type { WebhooksConfig } from '../../common/config.ts';
import type { KeyEncryption } from '../../common/key-encryption.ts';
import type { Logger } from '../../common/log.ts';
import type { WebhookCollections } from './records.ts';

/** Everything the webhooks' handlers and the dispatcher use, built once by the agents module. */
export interface WebhooksContext extends WebhookCollections {
  /** The agents service's outbox: endpoints disabled for failing are events too. */
  outbox: EventOutbox;
  /** Seals the signing secrets at rest. */
  kek: KeyEncryption;
  config: WebhooksConfig;
  logger: Logger;
  now: () => number;
  /** Tells this replica's dispatcher that deliveries are due now. */
  wake: () => void;
}

/** The sealing context of an endpoint's secrets: an envelope copied to another endpoint does not open. */
export const secretContext = (endpointId: string) => `webhook_endpoints/${endpointId}/secret`;
