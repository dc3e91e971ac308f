// What the dashboard (the REST API) does to the authorization server's state for an
// organization: list the clients acting for it and their grants, revoke a client's tokens or one
// of its grants, issue and manage confidential clients for client_credentials. It works on the
// records the authorization server uses, so it needs no provider instance and runs on any replica.
import { randomBytes } from 'node:crypto';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import type { RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import { findPage, pageOf, type Page, type PageRequest } from '../../services/common/storage/records/paging.ts';
import type { EdgeConfig } from '../config.ts';
import { clientRecord, collectionName, createAdapterFactory, openClientRecord } from './adapter.ts';
import type { GrantRecord } from './provider.ts';
import { createRevocationStore } from './revocations.ts';

interface ClientDoc extends RecordDoc {
  /** JSON text with the secret sealed, as the adapter stores every Client payload (clientRecord). */
  payload: string;
  sealedWith?: string;
  clientId?: string;
  organizationId?: string;
  /** Confidential clients: creation time (epoch ms), the order they are listed in. */
  createdAt?: number;
}

export interface ClientSummary {
  clientId: string;
  clientName: string | null;
  grants: { grantId: string; userId: string; scope: string; resources: string[]; createdAt: number }[];
}

export interface ConfidentialClient {
  clientId: string;
  clientName: string;
  organizationId: string;
  createdAt: number;
  secretRotatedAt?: number;
}

export type OAuthManagement = ReturnType<typeof createOAuthManagement>;

export function createOAuthManagement(records: RecordStore, kek: KeyEncryption, config: EdgeConfig, now: () => number = Date.now) {
  const parts = openParts(records, kek, config, now);
  return { ...grantManagement(parts), ...confidentialClientManagement(parts), ...organizationPurge(parts) };
}

type Parts = ReturnType<typeof openParts>;

/** The records both halves work on, and the helpers they share. */
function openParts(records: RecordStore, kek: KeyEncryption, config: EdgeConfig, now: () => number) {
  const revocations = createRevocationStore(records, now);
  const adapters = createAdapterFactory({ records, kek, revocations, accessTokenTtl: config.auth.accessTokenTtl, now });
  const grants = records.collection<GrantRecord>('auth_grants', {
    indexes: [{ fields: ['organizationId', 'clientId'] }, { fields: ['clientId'] }],
  });
  // The same collection the adapter keeps oidc-provider's Client model in.
  const clients = records.collection<ClientDoc>(collectionName('Client'), { indexes: [{ fields: ['organizationId', 'createdAt'] }] });
  void adapters.collection('Client');

  const payloadOf = (doc: ClientDoc) => openClientRecord(kek, doc._id, doc.payload).payload;
  const toConfidential = (doc: ClientDoc): ConfidentialClient => {
    const p = payloadOf(doc);
    return {
      clientId: doc._id,
      clientName: String(p.client_name ?? doc._id),
      organizationId: String(p.organization_id),
      createdAt: Number(p.created_at_ms ?? 0),
      secretRotatedAt: p.secret_rotated_at_ms === undefined ? undefined : Number(p.secret_rotated_at_ms),
    };
  };

  async function ownedConfidential(organizationId: string, clientId: string): Promise<ClientDoc | undefined> {
    const doc = await clients.get(clientId);
    return doc && doc.organizationId === organizationId ? doc : undefined;
  }

  const newSecret = () => randomBytes(32).toString('base64url');
  return { config, kek, now, revocations, adapters, grants, clients, payloadOf, toConfidential, ownedConfidential, newSecret };
}

/** The clients acting for an organization, with their grants, and revoking them. */
function grantManagement({ config, now, revocations, adapters, grants, clients, payloadOf }: Parts) {
  return {
    /**
     * One page of the clients holding grants for the organization, with those grants, in the
     * order of their first grant. Grants are grouped per client, which the records port cannot
     * do: every page reads the organization's grants (at most 5,000) and pages the grouping.
     */
    async listClients(organizationId: string, request: PageRequest): Promise<Page<ClientSummary>> {
      const list = await grants.find({ organizationId }, { sort: { field: 'createdAt', direction: 'asc' }, limit: 5_000 });
      const byClient = new Map<string, ClientSummary>();
      const docs = await clients.getMany([...new Set(list.map((g) => g.clientId))]);
      const names = new Map(
        docs.map((d) => {
          const name = payloadOf(d).client_name;
          return [d._id, typeof name === 'string' ? name : null];
        }),
      );
      for (const g of list) {
        let entry = byClient.get(g.clientId);
        if (!entry) {
          entry = { clientId: g.clientId, clientName: names.get(g.clientId) ?? null, grants: [] };
          byClient.set(g.clientId, entry);
        }
        entry.grants.push({ grantId: g._id, userId: g.accountId, scope: g.scope, resources: g.resources, createdAt: g.createdAt });
      }
      const position = (c: ClientSummary) => ({ v: c.grants[0].createdAt, i: c.clientId });
      const sorted = [...byClient.values()].sort((a, b) => position(a).v - position(b).v || (a.clientId < b.clientId ? -1 : 1));
      return pageOf(sorted, position, request, { scope: `oauth-clients:${organizationId}` });
    },

    /**
     * Revokes every token the client holds for the organization: its grants (refresh tokens)
     * are deleted, and access tokens already issued are refused by every resource server
     * within the verifier's cache time. Returns how many grants were revoked.
     */
    async revokeClient(organizationId: string, clientId: string): Promise<number> {
      const owned = await grants.find({ organizationId, clientId }, { limit: 10_000 });
      await revocations.revokeClient(organizationId, clientId, now() + (config.auth.accessTokenTtl + 60) * 1000);
      for (const g of owned) {
        await adapters.revokeGrant(g._id);
        await grants.delete(g._id);
      }
      return owned.length;
    },

    /**
     * Revokes one grant (one user's authorization of the client for the organization): its
     * refresh tokens at once, its access tokens within the verifier's cache time. False when the
     * organization holds no such grant of that client.
     */
    async revokeGrant(organizationId: string, clientId: string, grantId: string): Promise<boolean> {
      const grant = await grants.get(grantId);
      if (!grant || grant.organizationId !== organizationId || grant.clientId !== clientId) return false;
      await adapters.revokeGrant(grantId);
      await grants.delete(grantId);
      return true;
    },
  };
}

/** Confidential clients an organization issues for client_credentials. */
function confidentialClientManagement({
  config,
  now,
  revocations,
  clients,
  kek,
  payloadOf,
  toConfidential,
  ownedConfidential,
  newSecret,
}: Parts) {
  return {
    async createConfidentialClient(organizationId: string, name: string): Promise<{ client: ConfidentialClient; secret: string }> {
      const clientId = `cc_${randomBytes(12).toString('hex')}`;
      const secret = newSecret();
      const payload = {
        client_id: clientId,
        client_secret: secret,
        client_name: name,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        organization_id: organizationId,
        created_at_ms: now(),
      };
      const doc: ClientDoc = {
        _id: clientId,
        ...clientRecord(kek, clientId, payload),
        clientId,
        organizationId,
        createdAt: payload.created_at_ms,
        consumed: 0,
      };
      await clients.put(doc, { expect: null });
      return { client: toConfidential(doc), secret };
    },

    /** One page of the organization's confidential clients, oldest first. */
    async listConfidentialClients(organizationId: string, request: PageRequest): Promise<Page<ConfidentialClient>> {
      // Clients created before the top-level createdAt get it from their payload, once.
      for (const doc of await clients.find({ organizationId, createdAt: null }, { limit: 1_000 })) {
        await clients.put({ ...doc, createdAt: Number(payloadOf(doc).created_at_ms ?? 0) });
      }
      const page = await findPage(clients, { organizationId }, request, {
        field: 'createdAt',
        scope: `confidential-clients:${organizationId}`,
      });
      return { items: page.items.map(toConfidential), nextPageToken: page.nextPageToken };
    },

    async getConfidentialClient(organizationId: string, clientId: string): Promise<ConfidentialClient | undefined> {
      const doc = await ownedConfidential(organizationId, clientId);
      return doc ? toConfidential(doc) : undefined;
    },

    /** A new secret; the old one stops working at once. Tokens already issued stay valid. */
    async rotateConfidentialSecret(
      organizationId: string,
      clientId: string,
    ): Promise<{ client: ConfidentialClient; secret: string } | undefined> {
      const doc = await ownedConfidential(organizationId, clientId);
      if (!doc) return undefined;
      const secret = newSecret();
      const updated: ClientDoc = {
        ...doc,
        ...clientRecord(kek, clientId, { ...payloadOf(doc), client_secret: secret, secret_rotated_at_ms: now() }),
      };
      await clients.put(updated);
      return { client: toConfidential(updated), secret };
    },

    /** Deletes the client and revokes its tokens. */
    async deleteConfidentialClient(organizationId: string, clientId: string): Promise<boolean> {
      const doc = await ownedConfidential(organizationId, clientId);
      if (!doc) return false;
      await clients.delete(clientId);
      await revocations.revokeClient(organizationId, clientId, now() + (config.auth.accessTokenTtl + 60) * 1000);
      return true;
    },
  };
}

/** Removing a deleted organization from the authorization server's records. */
function organizationPurge({ config, now, revocations, adapters, grants, clients }: Parts) {
  return {
    /**
     * Up to `batch` of the organization's grants (refresh tokens with them) and of its
     * confidential clients (tokens revoked) per call; done when none is left. Its access tokens
     * are refused by revokeOrganization already.
     */
    async purgeOrganization(organizationId: string, batch: number): Promise<{ deleted: number; done: boolean }> {
      const owned = await grants.find({ organizationId }, { limit: batch });
      for (const g of owned) {
        await adapters.revokeGrant(g._id);
        await grants.delete(g._id);
      }
      const confidential = await clients.find({ organizationId }, { limit: Math.max(0, batch - owned.length) });
      for (const doc of confidential) {
        await revocations.revokeClient(organizationId, doc._id, now() + (config.auth.accessTokenTtl + 60) * 1000);
        await clients.delete(doc._id);
      }
      const deleted = owned.length + confidential.length;
      return { deleted, done: deleted < batch };
    },
  };
}
