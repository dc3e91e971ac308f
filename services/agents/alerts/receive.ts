// ReceiveAlerts: a payload sent to a source's URL, authenticated by the source's secret (sources.ts),
// parsed in the source's format (payloads.ts), and each alert processed (processing.ts). The
// organization's rules are read once per payload, and only when an alert may open something.
import { create } from '@bufbuild/protobuf';
import { ReceiveAlertsResponseSchema, type ReceiveAlertsRequest } from '../../../gen/mindgate/agents/v1/alerts_pb.js';
import type { AlertRuleRecord, AlertsContext } from './records.ts';
import { parseAlerts } from './payloads.ts';
import { processAlert } from './processing.ts';
import { rulesOf } from './rules.ts';
import { authenticateSource } from './sources.ts';

export async function receiveAlerts(ctx: AlertsContext, req: ReceiveAlertsRequest) {
  const source = await authenticateSource(ctx, req);
  const alerts = parseAlerts(source.format, req.payload);
  let rules: Promise<AlertRuleRecord[]> | undefined;
  const counts = { opened: 0, deduplicated: 0, resolved: 0, investigationsOpened: 0 };
  const ids: string[] = [];
  for (const alert of alerts) {
    const outcome = await processAlert(ctx, source, alert, () => (rules ??= rulesOf(ctx, source.organizationId)));
    if (outcome.event) ids.push(outcome.event._id);
    if (outcome.kind === 'opened') {
      counts.opened++;
      if (outcome.investigation) counts.investigationsOpened++;
    } else if (outcome.kind === 'deduplicated') counts.deduplicated++;
    else if (outcome.kind === 'resolved') counts.resolved++;
  }
  // When it last took a payload: informative, so a lost race with a rotation leaves it as it was.
  await ctx.sources.put({ ...source, lastReceivedAt: ctx.now() }, { expect: { version: source.version } });
  return create(ReceiveAlertsResponseSchema, {
    organizationId: source.organizationId,
    received: alerts.length,
    alertEventIds: ids,
    ...counts,
  });
}
