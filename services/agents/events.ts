// The agents service's events (services/common/events/catalogue.ts): members, invitations, API
// keys, and webhook endpoints disabled for failing. Each is written to the service's outbox with
// the change that makes it (putWithEvents, deleteWithEvents), so none is lost or invented.
import { event, type EventOutbox, type NewEvent } from '../common/events/outbox.ts';
import type { RecordCollection } from '../common/storage/records/interface.ts';
import type { ApiKeyRecord } from './handlers/api-keys.ts';
import type { InvitationRecord } from './handlers/invitations.ts';
import type { MembershipRecord, RoleName } from './handlers/organizations.ts';

/** What a handler needs to write records with their events. */
export interface EventsContext {
  events: EventOutbox;
}

/** The collections the agents service's events are about, by name. */
export const SUBJECTS = {
  memberships: 'memberships',
  invitations: 'invitations',
  apiKeys: 'api_keys',
  webhookEndpoints: 'webhook_endpoints',
} as const;

export const membershipSubject = (records: RecordCollection<MembershipRecord>) => ({ collection: SUBJECTS.memberships, records });
export const invitationSubject = (records: RecordCollection<InvitationRecord>) => ({ collection: SUBJECTS.invitations, records });
export const apiKeySubject = (records: RecordCollection<ApiKeyRecord>) => ({ collection: SUBJECTS.apiKeys, records });

const iso = (ms: number) => new Date(ms).toISOString();

export function memberAdded(m: MembershipRecord, via: 'organization_created' | 'invitation' | 'direct'): NewEvent {
  return event('member.added', m.organizationId, { user_id: m.userId, role: m.role, via });
}

/** Nothing when the role did not change. */
export function memberUpdated(m: MembershipRecord, previous: RoleName): NewEvent[] {
  if (m.role === previous) return [];
  return [event('member.updated', m.organizationId, { user_id: m.userId, role: m.role, previous_role: previous })];
}

export function memberRemoved(m: MembershipRecord, reason: 'removed' | 'left' | 'account_deleted'): NewEvent {
  return event('member.removed', m.organizationId, { user_id: m.userId, role: m.role, reason });
}

type InvitationType = 'invitation.created' | 'invitation.resent' | 'invitation.revoked' | 'invitation.accepted';

export function invitationEvent(type: InvitationType, r: InvitationRecord): NewEvent {
  const data = {
    id: r._id,
    email: r.email,
    role: r.role,
    team_ids: r.teamIds ?? [],
    invited_by: r.invitedBy,
    expires_at: iso(r.expireAt),
  };
  if (type === 'invitation.accepted') return event(type, r.organizationId, { ...data, user_id: r.acceptedBy ?? '' });
  return event(type, r.organizationId, data);
}

export function apiKeyEvent(type: 'api_key.created' | 'api_key.rotated' | 'api_key.revoked', r: ApiKeyRecord): NewEvent {
  return event(type, r.organizationId, {
    id: r._id,
    name: r.name,
    prefix: r.prefix,
    scopes: r.scopes ?? ['read'],
    team_id: r.teamId ?? null,
    created_by: r.createdBy,
  });
}
