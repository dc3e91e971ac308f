// The alerts part of the agents service: AlertsService over the alerts' collections, writing its
// events to the service's outbox and opening investigations through the threads' and runs' code.
import type { ConnectRouter } from '@connectrpc/connect';
import { AlertsService } from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import { acknowledgeAlertEvent, getAlertEvent, listAlertEvents, resolveAlertEvent, snoozeAlertEvent } from './alert-events.ts';
import type { AlertsContext } from './records.ts';
import { receiveAlerts } from './receive.ts';
import { createAlertRule, deleteAlertRule, getAlertRule, listAlertRules, updateAlertRule } from './rules.ts';
import { createAlertSource, deleteAlertSource, getAlertSource, listAlertSources, rotateAlertSourceSecret } from './sources.ts';

export function alertRoutes(router: ConnectRouter, ctx: AlertsContext): void {
  router.service(AlertsService, {
    createAlertSource: (req) => createAlertSource(ctx, req),
    getAlertSource: (req) => getAlertSource(ctx, req),
    listAlertSources: (req) => listAlertSources(ctx, req),
    deleteAlertSource: (req) => deleteAlertSource(ctx, req),
    rotateAlertSourceSecret: (req) => rotateAlertSourceSecret(ctx, req),
    receiveAlerts: (req) => receiveAlerts(ctx, req),
    createAlertRule: (req) => createAlertRule(ctx, req),
    getAlertRule: (req) => getAlertRule(ctx, req),
    listAlertRules: (req) => listAlertRules(ctx, req),
    updateAlertRule: (req) => updateAlertRule(ctx, req),
    deleteAlertRule: (req) => deleteAlertRule(ctx, req),
    listAlertEvents: (req) => listAlertEvents(ctx, req),
    getAlertEvent: (req) => getAlertEvent(ctx, req),
    acknowledgeAlertEvent: (req) => acknowledgeAlertEvent(ctx, req),
    resolveAlertEvent: (req) => resolveAlertEvent(ctx, req),
    snoozeAlertEvent: (req) => snoozeAlertEvent(ctx, req),
  });
}

export { AlertsService };
