// The plan's `max_members`, enforced where people join: an invitation is refused when the members
// and the pending invitations already reach it (each pending invitation holds a seat), and an
// invitation is not accepted while the members alone reach it (the link stays valid, for after an
// upgrade or a departure). Refusals are RESOURCE_EXHAUSTED with the reason plan-limit, naming the
// plan and the limit. The plan is read through the entitlements cache (services/billing); when
// billing cannot answer, people may join (logged).
import { Code } from '@connectrpc/connect';
import type { EntitlementsCache } from '../../billing/entitlements-cache.ts';
import type { Logger } from '../../common/log.ts';
import { failure, REASONS } from '../../common/rpc/reasons.ts';
import type { RecordCollection } from '../../common/storage/records/interface.ts';
import type { ServiceDeps } from '../../modules.ts';
import { createEntitlementsCache } from '../../billing/entitlements-cache.ts';
import type { InvitationRecord, InvitationsContext } from './invitations.ts';
import type { MembershipRecord } from './organizations.ts';

/** Resolves when one more person may be invited (`invite`) or join (`accept`). */
export type MemberLimit = (organizationId: string, step: 'invite' | 'accept') => Promise<void>;

export interface MemberLimitDeps {
  memberships: RecordCollection<MembershipRecord>;
  invitations: RecordCollection<InvitationRecord>;
  entitlements: EntitlementsCache;
  logger: Logger;
  now: () => number;
}

export function createMemberLimit(deps: MemberLimitDeps): MemberLimit {
  return async (organizationId, step) => {
    let limit: number;
    let plan: string;
    try {
      const res = await deps.entitlements.get(organizationId);
      limit = Number(res.entitlements?.maxMembers ?? 0n);
      plan = res.planName || 'current';
    } catch (err) {
      deps.logger.warn({ err, organizationId }, 'plan unknown (billing did not answer): member accepted without checking max_members');
      return;
    }
    if (limit <= 0) return;
    const members = await deps.memberships.count({ organizationId });
    const pending =
      step === 'invite' ? await deps.invitations.count({ organizationId, state: 'pending', expireAt: { $gt: deps.now() } }) : 0;
    if (members + pending < limit) return;
    const held = step === 'invite' ? `${members} members and ${pending} pending invitations` : `${members} members`;
    throw failure(
      `the ${plan} plan allows ${limit} members, pending invitations included, and the organization has ${held}: ` +
        `${step === 'invite' ? 'revoke an invitation, remove a member' : 'remove a member'} or move to a plan with more`,
      Code.ResourceExhausted,
      REASONS.planLimit,
    );
  };
}

/** The invitations' context with the plan's member limit, when the module has billing to ask. */
export function withMemberLimit(
  ctx: InvitationsContext,
  deps: Pick<ServiceDeps, 'now' | 'billing'> | undefined,
  logger: Logger,
): InvitationsContext {
  if (!deps) return ctx;
  const entitlements = createEntitlementsCache(deps);
  return { ...ctx, memberLimit: createMemberLimit({ ...ctx, entitlements, logger: logger.child({ service: 'agents' }) }) };
}
