// The billing service: plans and subscriptions (BillingService), checkouts and the payment
// provider's webhooks (CheckoutService), invoices (InvoicesService) and the brain-pass
// (BrainPassService). It owns the collections subscriptions, billing_checkouts, billing_invoices,
// billing_provider_events and brain_pass_settlements.
import { BillingService } from '../../gen/mindgate/billing/v1/billing_pb.js';
import { BrainPassService } from '../../gen/mindgate/billing/v1/brain_pass_pb.js';
import { CheckoutService } from '../../gen/mindgate/billing/v1/checkout_pb.js';
import { InvoicesService } from '../../gen/mindgate/billing/v1/invoices_pb.js';
import type { ModuleConfig } from '../common/config.ts';
import type { Logger } from '../common/log.ts';
import type { RpcServiceModule } from '../common/rpc/server.ts';
import type { RecordStores } from '../common/stores.ts';
import type { ServiceDeps } from '../modules.ts';
import { createBillingContext } from './context.ts';
import { completePass, issueChallenges, settlePass } from './handlers/brain-pass.ts';
import { completeManualCheckout, createCheckout, getCheckout } from './handlers/checkouts.ts';
import { listInvoices, markInvoicePaid } from './handlers/invoices.ts';
import { cancelSubscription, changePlan, resumeSubscription } from './handlers/plan-changes.ts';
import { deleteSubscription } from './handlers/organization-billing.ts';
import { getEntitlements, listPlans, resolveRegion, setPlan, startTrial } from './handlers/subscriptions.ts';
import { handleProviderWebhook } from './handlers/webhooks.ts';

export function createBillingModule(stores: RecordStores, logger: Logger, _config: ModuleConfig, deps: ServiceDeps): RpcServiceModule {
  const ctx = createBillingContext(stores, logger.child({ service: 'billing' }), {
    config: deps.billingConfig,
    dataDir: deps.dataDir,
    now: deps.now,
  });
  return {
    services: [BillingService, CheckoutService, InvoicesService, BrainPassService],
    routes: (router) => {
      router.service(BillingService, {
        getEntitlements: (req) => getEntitlements(ctx, req),
        setPlan: (req) => setPlan(ctx, req),
        deleteSubscription: (req) => deleteSubscription(ctx, req),
        startTrial: (req) => startTrial(ctx, req),
        listPlans: (req) => listPlans(ctx, req),
        resolveRegion: (req) => resolveRegion(ctx, req),
        changePlan: (req) => changePlan(ctx, req),
        cancelSubscription: (req) => cancelSubscription(ctx, req),
        resumeSubscription: (req) => resumeSubscription(ctx, req),
      });
      router.service(CheckoutService, {
        createCheckout: (req) => createCheckout(ctx, req),
        getCheckout: (req) => getCheckout(ctx, req),
        completeManualCheckout: (req) => completeManualCheckout(ctx, req),
        handleProviderWebhook: (req) => handleProviderWebhook(ctx, req),
      });
      router.service(InvoicesService, {
        listInvoices: (req) => listInvoices(ctx, req),
        markInvoicePaid: (req) => markInvoicePaid(ctx, req),
      });
      router.service(BrainPassService, {
        issueChallenges: (req) => issueChallenges(ctx, req),
        settlePass: (req) => settlePass(ctx, req),
        completePass: (req) => completePass(ctx, req),
      });
    },
    // Only the records store: this service keeps no vectors.
    probe: () => stores.probe(['records']),
  };
}
