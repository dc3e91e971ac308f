// What has been revoked before it expired: single access tokens (by jti), whole grants (a
// refresh-token family with its access tokens), every token of a client in an organization
// ("revoked from the dashboard") and every token of a deleted organization, whenever issued. Kept in the records store so that every replica, and the Brain
// behind the gateway, sees a revocation; each answer is cached for at most CACHE_MS.
import type { RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';

export const REVOCATION_CACHE_MS = 2_000;

interface RevokedDoc extends RecordDoc {
  revokedAt: number;
}

export interface RevocationQuery {
  tokenId: string;
  grantId?: string;
  clientId: string;
  organizationId: string;
  /** Issued-at of the token, epoch seconds. */
  issuedAt: number;
}

export interface RevocationStore {
  revokeToken(tokenId: string, expiresAt: number): Promise<void>;
  revokeGrant(grantId: string, expiresAt: number): Promise<void>;
  /** Every token of `clientId` acting for `organizationId` issued up to now stops working. */
  revokeClient(organizationId: string, clientId: string, expiresAt: number): Promise<void>;
  /** Every token acting for the (deleted) organization stops working, whenever it was issued. */
  revokeOrganization(organizationId: string): Promise<void>;
  isRevoked(query: RevocationQuery): Promise<boolean>;
}

// One instance per records store in a process, so that a revocation made here (the REST API's
// "revoke", the revocation endpoint) clears this process's cache at once; other replicas see it
// when their cached answer expires.
const instances = new WeakMap<RecordStore, RevocationStore>();

export function createRevocationStore(records: RecordStore, now: () => number = Date.now): RevocationStore {
  let store = instances.get(records);
  if (!store) {
    store = build(records, now);
    instances.set(records, store);
  }
  return store;
}

function build(records: RecordStore, now: () => number): RevocationStore {
  const tokens = records.collection<RevokedDoc>('auth_revoked_tokens');
  const grants = records.collection<RevokedDoc>('auth_revoked_grants');
  const clients = records.collection<RevokedDoc>('auth_revoked_clients');
  const organizations = records.collection<RevokedDoc>('auth_revoked_organizations');
  const cache = new Map<string, { doc: RevokedDoc | undefined; until: number }>();

  async function lookup(kind: string, collection: typeof tokens, id: string): Promise<RevokedDoc | undefined> {
    const key = `${kind}:${id}`;
    const t = now();
    const hit = cache.get(key);
    if (hit && hit.until > t) return hit.doc;
    const doc = await collection.get(id);
    if (cache.size > 50_000) cache.clear();
    cache.set(key, { doc, until: t + REVOCATION_CACHE_MS });
    return doc;
  }

  return {
    async revokeToken(tokenId, expiresAt) {
      await tokens.put({ _id: tokenId, revokedAt: now(), expiresAt });
      cache.delete(`token:${tokenId}`);
    },
    async revokeGrant(grantId, expiresAt) {
      const existing = await grants.get(grantId);
      if (existing && (existing.expiresAt ?? Infinity) >= expiresAt) return;
      await grants.put({ _id: grantId, revokedAt: existing?.revokedAt ?? now(), expiresAt });
      cache.delete(`grant:${grantId}`);
    },
    async revokeClient(organizationId, clientId, expiresAt) {
      const id = `${organizationId}/${clientId}`;
      await clients.put({ _id: id, revokedAt: now(), expiresAt });
      cache.delete(`client:${id}`);
    },
    async revokeOrganization(organizationId) {
      // Kept for good: a deleted organization never comes back, and the record is tiny.
      await organizations.put({ _id: organizationId, revokedAt: now() });
      cache.delete(`organization:${organizationId}`);
    },
    async isRevoked(q) {
      const [token, grant, client, organization] = await Promise.all([
        lookup('token', tokens, q.tokenId),
        q.grantId ? lookup('grant', grants, q.grantId) : undefined,
        lookup('client', clients, `${q.organizationId}/${q.clientId}`),
        lookup('organization', organizations, q.organizationId),
      ]);
      if (token || grant || organization) return true;
      // Seconds resolution of iat: a token from the very second of the revocation counts as revoked.
      return client !== undefined && q.issuedAt * 1000 <= client.revokedAt;
    },
  };
}
