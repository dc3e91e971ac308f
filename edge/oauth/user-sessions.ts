// Ending everything a user holds at the authorization server, when their account is deleted: every
// grant (its refresh tokens and codes at once, its access tokens at the REST API and the Brain
// within the verifier's cache time, ~2 s) and every sign-in session. These are the authorization
// server's own records (oidc-provider's storage), so the edge ends them; the account itself is the
// agents service's (UsersService.DeleteUser).
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';
import type { EdgeConfig } from '../config.ts';
import { createAdapterFactory } from './adapter.ts';
import type { GrantRecord } from './provider.ts';
import { createRevocationStore } from './revocations.ts';

const MAX = 10_000;

export function createUserSessions(records: RecordStore, kek: KeyEncryption, config: EdgeConfig, now: () => number) {
  const revocations = createRevocationStore(records, now);
  const adapters = createAdapterFactory({ records, kek, revocations, accessTokenTtl: config.auth.accessTokenTtl, now });
  const grants = records.collection<GrantRecord>('auth_grants', {
    indexes: [{ fields: ['organizationId', 'clientId'] }, { fields: ['clientId'] }, { fields: ['accountId'] }],
  });
  return {
    /** Revokes every grant of the user and ends their sessions; says how many of each. */
    async endUser(accountId: string): Promise<{ grantsRevoked: number; sessionsEnded: number }> {
      const ids = new Set<string>();
      for (const g of await grants.find({ accountId }, { limit: MAX })) ids.add(g._id);
      for (const g of await adapters.collection('Grant').find({ accountId }, { limit: MAX })) ids.add(g._id);
      for (const id of ids) {
        await adapters.revokeGrant(id);
        await grants.delete(id);
      }
      const sessionsEnded = await adapters.collection('Session').deleteMany({ accountId });
      return { grantsRevoked: ids.size, sessionsEnded };
    },
  };
}
