// oidc-provider's storage adapter over the records port: one collection per model, expiry via
// `expiresAt`, and grant / session-uid / user-code lookups through top-level indexed fields.
// Nothing lives in process memory, so any replica can continue any flow. A client's secret is
// stored sealed under the key-encryption key (clientRecord), never in clear.
import { errors } from 'oidc-provider';
import type { KeyEncryption } from '../../services/common/key-encryption.ts';
import type { SealedRecords } from '../../services/common/key-encryption-reseal.ts';
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
  /** Client records: id of the key-encryption key the record was written under (see clientRecord). */
  sealedWith?: string;
}

/** Models whose entries belong to a grant and die with it. */
const GRANTABLE = ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest'];

export interface AdapterOptions {
  records: RecordStore;
  /** Seals client secrets. */
  kek: KeyEncryption;
  revocations: RevocationStore;
  /** How long a revoked grant must be remembered: the longest access-token lifetime, in seconds. */
  accessTokenTtl: number;
  now: () => number;
}

export function collectionName(model: string): string {
  return `oidc_${model.toLowerCase()}`;
}

const clientSecretContext = (clientId: string) => `${collectionName('Client')}/${clientId}/client_secret`;

/**
 * The stored form of a Client payload: JSON text with `client_secret` replaced by its envelope
 * (`client_secret_sealed`), and the id of the key-encryption key it was written under. Every
 * writer of Client records (the adapter, management.ts, gateway-client.ts) goes through it.
 */
export function clientRecord(kek: KeyEncryption, clientId: string, payload: Payload): { payload: string; sealedWith: string } {
  const { client_secret: secret, ...rest } = payload;
  const stored = typeof secret === 'string' ? { ...rest, client_secret_sealed: kek.seal(secret, clientSecretContext(clientId)) } : payload;
  return { payload: JSON.stringify(stored), sealedWith: kek.keyId };
}

/**
 * A stored Client payload with its secret opened; `current` is false when the record must be
 * written again: its secret is in clear (an earlier version wrote it) or sealed under a previous
 * key-encryption key. Throws KeyEncryptionError when no configured key opens it.
 */
export function openClientRecord(kek: KeyEncryption, clientId: string, text: string): { payload: Payload; current: boolean } {
  const { client_secret_sealed: sealed, ...rest } = JSON.parse(text) as Payload;
  if (typeof sealed !== 'string') return { payload: rest, current: typeof rest.client_secret !== 'string' };
  return { payload: { ...rest, client_secret: kek.open(sealed, clientSecretContext(clientId)) }, current: !kek.isStale(sealed) };
}

/**
 * The Client records as the start re-seals them (services/common/key-encryption-reseal.ts): every
 * one not written under the current key-encryption key, so a rotation or an upgrade leaves no
 * secret behind. The write is conditional on the payload read, which the new envelope changes.
 */
export function sealedClientSecrets(records: RecordStore, kek: KeyEncryption): SealedRecords<ModelDoc> {
  return {
    collection: records.collection<ModelDoc>(collectionName('Client')),
    filter: { sealedWith: { $ne: kek.keyId } },
    reseal: (doc) =>
      doc.sealedWith === kek.keyId
        ? undefined
        : { ...doc, ...clientRecord(kek, doc._id, openClientRecord(kek, doc._id, doc.payload).payload) },
    expect: (doc) => ({ payload: doc.payload }),
  };
}

export function createAdapterFactory(options: AdapterOptions) {
  const collections = new Map<string, RecordCollection<ModelDoc>>();
  const open = (model: string) => {
    let c = collections.get(model);
    if (!c) {
      c = options.records.collection<ModelDoc>(collectionName(model), {
        indexes: [
          { fields: ['grantId'] },
          { fields: ['uid'] },
          { fields: ['userCode'] },
          { fields: ['clientId'] },
          { fields: ['accountId'] },
        ],
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

    /** Client payloads carry a secret; no other model's does. */
    private encode(id: string, payload: Payload): Pick<ModelDoc, 'payload' | 'sealedWith'> {
      return this.model === 'Client' ? clientRecord(options.kek, id, payload) : { payload: JSON.stringify(payload) };
    }

    private decode(doc: ModelDoc): Payload {
      return this.model === 'Client' ? openClientRecord(options.kek, doc._id, doc.payload).payload : (JSON.parse(doc.payload) as Payload);
    }

    async upsert(id: string, payload: Payload, expiresIn?: number): Promise<void> {
      const doc: ModelDoc = { _id: id, ...this.encode(id, payload), consumed: typeof payload.consumed === 'number' ? payload.consumed : 0 };
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
      const payload = this.decode(doc);
      return doc.consumed ? { ...payload, consumed: doc.consumed } : payload;
    }

    async findByUid(uid: string): Promise<Payload | undefined> {
      const [doc] = await this.collection.find({ uid }, { limit: 1 });
      return doc ? this.decode(doc) : undefined;
    }

    async findByUserCode(userCode: string): Promise<Payload | undefined> {
      const [doc] = await this.collection.find({ userCode }, { limit: 1 });
      return doc ? this.decode(doc) : undefined;
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
