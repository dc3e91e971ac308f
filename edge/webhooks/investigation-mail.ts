// E-mails an alert rule's notification addresses: the alert.investigation_opened and
// alert.investigation_finished events name them (the rule's channels when the change was made),
// and the relay hands each such event here before acknowledging it. Every message goes through the
// durable mail queue (written first, retried by any replica), as the owners' e-mail about a
// disabled endpoint does (notify.ts). A relay that dies between the mail and the acknowledgement
// hands the event out again, and the mail is sent again: at least once, like the webhook.
import type { Event } from '../../gen/mindgate/events/v1/outbox_pb.js';
import type { EventData } from '../../services/common/events/catalogue.ts';
import type { AppContext } from '../context.ts';

type Opened = EventData<'alert.investigation_opened'>;
type Finished = EventData<'alert.investigation_finished'>;

const links = (ctx: AppContext, organizationId: string, threadId: string) => [
  `Investigation: ${ctx.config.publicUrls.web}/app/investigations/${threadId}`,
  `API: ${ctx.config.publicUrls.api}/organizations/${organizationId}/threads/${threadId}`,
];

function openedMail(ctx: AppContext, e: Event, d: Opened) {
  const a = d.alert;
  const labels = Object.entries(a.labels).map(([k, v]) => `${k}=${v}`);
  const lines = [
    `The alert rule "${d.rule_name}" opened an investigation: ${d.thread_title}`,
    '',
    `Alert: ${a.title} (severity ${a.severity || 'none'}, ${a.status})`,
    ...(labels.length > 0 ? [`Labels: ${labels.join(', ')}`] : []),
    ...(a.generator_url ? [`Source: ${a.generator_url}`] : []),
    d.run_id ? `Run: ${d.run_id} (queued)` : `No run was queued: ${d.note}`,
    ...(d.playbook_id ? [`Playbook: ${d.playbook_id} version ${d.playbook_version}`] : []),
    '',
    ...links(ctx, e.organizationId, d.thread_id),
  ];
  return { subject: `Investigation opened: ${d.thread_title}`.slice(0, 200), text: lines.join('\n') };
}

function finishedMail(ctx: AppContext, e: Event, d: Finished) {
  const conclusion = d.outcome === 'succeeded' ? d.run.output : d.run.error;
  const lines = [
    `The run of the investigation the alert rule "${d.rule_name}" opened has ended: ${d.outcome}.`,
    '',
    `Run: ${d.run.id} (${d.run.step_count} steps)`,
    '',
    conclusion.slice(0, 20_000),
    '',
    ...links(ctx, e.organizationId, d.thread_id),
  ];
  return { subject: `Investigation ${d.outcome.replace('_', ' ')}: rule ${d.rule_name}`.slice(0, 200), text: lines.join('\n') };
}

/** Sends each event's named addresses its message. */
export async function mailInvestigations(ctx: AppContext, events: Event[]): Promise<void> {
  for (const e of events) {
    if (e.emails.length === 0) continue;
    const data = JSON.parse(e.dataJson);
    const mail =
      e.type === 'alert.investigation_opened'
        ? openedMail(ctx, e, data as Opened)
        : e.type === 'alert.investigation_finished'
          ? finishedMail(ctx, e, data as Finished)
          : undefined;
    if (!mail) continue;
    for (const to of e.emails) await ctx.mail.send({ purpose: e.type, to, ...mail });
  }
}
