// The part of the agents service that keeps webhooks: endpoints, the event catalogue, publishing,
// the delivery log, usage, and the dispatcher that delivers in the background.
import type { ConnectRouter } from '@connectrpc/connect';
import { WebhooksService } from '../../../gen/mindgate/agents/v1/webhooks_pb.js';
import type { WebhooksConfig } from '../../common/config.ts';
import type { EventOutbox } from '../../common/events/outbox.ts';
import type { KeyEncryption } from '../../common/key-encryption.ts';
import type { Logger } from '../../common/log.ts';
import type { WebhooksContext } from './context.ts';
import { getDelivery, listDeliveries, redeliverDelivery, redeliverEndpoint } from './deliveries.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
} from './endpoints.ts';
import { listEventTypes } from './event-types.ts';
import { publishEvents, sendTestEvent } from './publish.ts';
import type { WebhookCollections } from './records.ts';
import { getWebhookUsage } from './usage.ts';

export interface WebhooksModuleOptions {
  collections: WebhookCollections;
  outbox: EventOutbox;
  kek: KeyEncryption;
  config: WebhooksConfig;
  logger: Logger;
  now: () => number;
}

export function webhooksModule(options: WebhooksModuleOptions) {
  let dispatcher: Dispatcher | undefined;
  const ctx: WebhooksContext = { ...options.collections, ...options, wake: () => dispatcher?.wake() };
  dispatcher = createDispatcher(ctx, options.logger.child({ component: 'webhooks' }));
  return {
    services: [WebhooksService],
    dispatcher,
    routes(router: ConnectRouter) {
      router.service(WebhooksService, {
        createWebhookEndpoint: (req) => createWebhookEndpoint(ctx, req),
        getWebhookEndpoint: (req) => getWebhookEndpoint(ctx, req),
        listWebhookEndpoints: (req) => listWebhookEndpoints(ctx, req),
        updateWebhookEndpoint: (req) => updateWebhookEndpoint(ctx, req),
        deleteWebhookEndpoint: (req) => deleteWebhookEndpoint(ctx, req),
        rotateWebhookEndpointSecret: (req) => rotateWebhookEndpointSecret(ctx, req),
        sendTestEvent: (req) => sendTestEvent(ctx, req),
        listEventTypes: () => listEventTypes(),
        listDeliveries: (req) => listDeliveries(ctx, req),
        getDelivery: (req) => getDelivery(ctx, req),
        redeliverDelivery: (req) => redeliverDelivery(ctx, req),
        redeliverEndpoint: (req) => redeliverEndpoint(ctx, req),
        getWebhookUsage: (req) => getWebhookUsage(ctx, req),
        publishEvents: (req) => publishEvents(ctx, req),
      });
    },
    close: () => dispatcher.stop(),
  };
}
