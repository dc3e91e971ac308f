import { BillingService } from '../../gen/mindgate/billing/v1/billing_pb.js';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { Stores } from '../common/stores.ts';
import { getEntitlements, setPlan, type BillingContext, type SubscriptionRecord } from './handlers/subscriptions.ts';

export function createBillingModule(stores: Stores, _logger: Logger, now: () => number = Date.now): RpcServiceModule {
  const ctx: BillingContext = { subscriptions: stores.records.collection<SubscriptionRecord>('subscriptions'), now };
  return {
    services: [BillingService],
    routes: (router) => {
      router.service(BillingService, {
        getEntitlements: (req) => getEntitlements(ctx, req),
        setPlan: (req) => setPlan(ctx, req),
      });
    },
    // Only the records store: this service keeps no vectors.
    probe: () => stores.probe(['records']),
  };
}
