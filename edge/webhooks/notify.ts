// Who hears that an endpoint was disabled: the webhook_endpoint.disabled event goes to the
// organization's other endpoints like any event, and, since the endpoint that failed will not
// hear it, the organization's owners get an e-mail through the mail queue (durable, retried).
import { Role } from '../../gen/mindgate/agents/v1/organizations_pb.js';
import type { Event } from '../../gen/mindgate/events/v1/outbox_pb.js';
import type { AppContext } from '../context.ts';

const MAX_OWNERS = 100;

async function ownerAddresses(ctx: AppContext, organizationId: string): Promise<string[]> {
  const addresses: string[] = [];
  let pageToken = '';
  do {
    const page = await ctx.clients.organizations.listMembers({ organizationId, pageSize: 100, pageToken });
    for (const m of page.members.filter((m) => m.role === Role.OWNER)) {
      const { user } = await ctx.clients.users.getUser({ userId: m.userId });
      if (user?.email && addresses.length < MAX_OWNERS) addresses.push(user.email);
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return addresses;
}

/** E-mails the owners of each organization whose endpoint was disabled among `events`. */
export async function notifyOwners(ctx: AppContext, events: Event[]): Promise<void> {
  for (const e of events.filter((e) => e.type === 'webhook_endpoint.disabled')) {
    const data = JSON.parse(e.dataJson) as { endpoint_id: string; url: string; failing_since: string; consecutive_failures: number };
    const text = [
      `The webhook endpoint ${data.endpoint_id} (${data.url}) of your organization was disabled:`,
      `every delivery to it has failed since ${data.failing_since} (${data.consecutive_failures} attempts in a row).`,
      '',
      'Events are no longer sent to it. Once the receiver works again, enable the endpoint',
      `(PATCH ${ctx.config.publicUrls.api}/organizations/${e.organizationId}/webhook-endpoints/${data.endpoint_id} with {"enabled": true})`,
      'and redeliver what it missed (POST …/redeliver with the time range).',
    ].join('\n');
    for (const to of await ownerAddresses(ctx, e.organizationId)) {
      await ctx.mail.send({ purpose: 'webhook-endpoint-disabled', to, subject: 'A webhook endpoint was disabled', text });
    }
  }
}
