// oidc-provider's storage adapter over the records port: one collection per model, expiry via
// `expiresAt`, and grant / session-uid / user-code lookups through top-level indexed fields.
// Nothing lives in process memory, so any replica can continue any flow.
import { errors } from 'oidc-provider';
import type { RecordCollection, RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import type { RevocationStore } from './revocations.ts';

type Payload = Record<string, unknown>;

interface ModelDoc extends RecordDoc {
  /**
   * The model's payload as JSON text: payloads use URLs as object keys (resource indicators),
   * which document stores do not accept as field names.
   */
  payload: string;
  grantId?: string;
  uid?: string;
  userCode?: string;
  clientId?: string;
  accountId?: string;
  /** Set on confidential clients issued to an organization. */
  organizationId?: string;
  /** Epoch seconds of consumption, 0 while unconsumed (the compare-and-set field of consume). */
  consumed: number;
}

/** Models whose entries belong to a grant and die with it. */
const GRANTABLE = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'];

export interface AdapterOptions {
  records: RecordStore;
  revocations: RevocationStore;
  /** How long a revoked grant must be remembered: the longest access-token lifetime, in seconds. */
  accessTokenTtl: number;
  now: () => number;
}

export function collectionName(model: string): string {
  return `oidc_${model.toLowerCase()}`;
}

export function createAdapterFactory(options: AdapterOptions) {
  const collections = new Map<string, RecordCollection<ModelDoc>>();
  const open = (model: string) => {
    let c = collections.get(model);
    if (!c) {
      c = options.records.collection<ModelDoc>(collectionName(model), {
        indexes: [{ fields: ['grantId'] }, { fields: ['uid'] }, { fields: ['userCode'] }, { fields: ['clientId'] }],
      });
      collections.set(model, c);
    }
    return c;
  };

  /** Deletes everything issued under a grant, in every model, and remembers the grant as revoked. */
  async function revokeGrant(grantId: string): Promise<void> {
    await options.revocations.revokeGrant(grantId, options.now() + (options.accessTokenTtl + 60) * 1000);
    await Promise.all(GRANTABLE.map((m) => open(m).deleteMany({ grantId })));
    await open('Grant').delete(grantId);
  }

  class RecordsAdapter {
    readonly model: string;
    readonly collection: RecordCollection<ModelDoc>;

    constructor(model: string) {
      this.model = model;
      this.collection = open(model);
    }

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      const doc: ModelDoc = { _id: id, payload: JSON.stringify(payload), consumed: typeof payload.consumed === 'number' ? payload.consumed : 0 };
      for (const field of ['grantId', 'uid', 'userCode', 'clientId', 'accountId'] as const) {
        const value = payload[field];
        if (typeof value === 'string') doc[field] = value;
      }
      if (typeof payload.organization_id === 'string') doc.organizationId = payload.organization_id;
      if (typeof expiresIn === 'number') doc.expiresAt = options.now() + expiresIn * 1000;
      await this.collection.put(doc);
    }

    async find(id: string): Promise<Payload | undefined> {
      const doc = await this.collection.get(id);
      if (!doc) return undefined;
      const payload = JSON.parse(doc.payload) as Payload;
      return doc.consumed ? { ...payload, consumed: doc.consumed } : payload;
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      const [doc] = await this.collection.find({ uid }, { limit: 1 });
      return doc ? (JSON.parse(doc.payload) as Payload) : undefined;
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      const [doc] = await this.collection.find({ userCode }, { limit: 1 });
      return doc ? (JSON.parse(doc.payload) as Payload) : undefined;
    }

    async consume(id: string): Promise<void> {
      const doc = await this.collection.get(id);
      if (!doc) throw new errors.InvalidGrant('grant source not found');
      const consumed = Math.floor(options.now() / 1000) || 1;
      // Two replicas redeeming the same code or refresh token at once: exactly one wins; the
      // loser is treated as a reuse, which revokes the whole grant.
      const won = doc.consumed === 0 && (await this.collection.put({ ...doc, consumed }, { expect: { consumed: 0 } }));
      if (!won) {
        if (doc.grantId) await revokeGrant(doc.grantId);
        throw new errors.InvalidGrant('grant source already used');
      }
    }

    async destroy(id: string): Promise<void> {
      await this.collection.delete(id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await revokeGrant(grantId);
    }
  }

  return {
    adapter: RecordsAdapter,
    revokeGrant,
    collection: open,
  };
}
