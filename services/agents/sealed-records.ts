// The agents service's records that hold secrets sealed under the key-encryption key, as its start
// seals them again under the current key (services/common/key-encryption-reseal.ts): webhook
// endpoints' signing secrets (the current one and any rotated-out one still signing), alert
// sources' secrets, and the upstream client secrets of MCP servers (sealed by the edge, stored
// here). Each record is written with its version moved on, conditional on the version read, as
// every other writer of these records does: a writer that read the old envelope loses its
// compare-and-set and reads the new one.
import { resealEnvelope, type SealedRecords } from '../common/key-encryption-reseal.ts';
import type { KeyEncryption } from '../common/key-encryption.ts';
import type { RecordCollection, RecordDoc } from '../common/storage/records/interface.ts';
import { alertSecretContext, type AlertSourceRecord } from './alerts/records.ts';
import { bumpRegistryVersion, type RegistryVersionRecord } from './handlers/gateway-registry.ts';
import { upstreamSecretContext } from './handlers/mcp-server-settings.ts';
import type { McpServerRecord } from './handlers/mcp-servers.ts';
import { secretContext } from './webhooks/context.ts';
import type { EndpointRecord } from './webhooks/records.ts';

/** `doc` with its version moved on, when `changed`; undefined (nothing to write) otherwise. */
const moved = <T extends RecordDoc & { version: number }>(doc: T, next: T, changed: boolean): T | undefined =>
  changed ? { ...next, version: doc.version + 1 } : undefined;

const byVersion = (doc: { version: number }) => ({ version: doc.version });

export function sealedEndpointSecrets(endpoints: RecordCollection<EndpointRecord>, kek: KeyEncryption): SealedRecords<EndpointRecord> {
  return {
    collection: endpoints,
    reseal(doc) {
      const secrets = doc.secrets.map((s) => ({ ...s, sealed: resealEnvelope(kek, s.sealed, secretContext(doc._id)) }));
      return moved(
        doc,
        { ...doc, secrets },
        doc.secrets.some((s) => kek.isStale(s.sealed)),
      );
    },
    expect: byVersion,
  };
}

export function sealedSourceSecrets(sources: RecordCollection<AlertSourceRecord>, kek: KeyEncryption): SealedRecords<AlertSourceRecord> {
  return {
    collection: sources,
    reseal: (doc) => moved(doc, { ...doc, sealed: resealEnvelope(kek, doc.sealed, alertSecretContext(doc._id)) }, kek.isStale(doc.sealed)),
    expect: byVersion,
  };
}

/** The servers' upstream client secrets; the gateway replicas poll the registry version, which moves once. */
export function sealedUpstreamSecrets(
  servers: RecordCollection<McpServerRecord>,
  state: RecordCollection<RegistryVersionRecord>,
  kek: KeyEncryption,
): SealedRecords<McpServerRecord> {
  return {
    collection: servers,
    reseal(doc) {
      const upstream = doc.auth.upstream;
      const sealed = upstream?.sealedClientSecret;
      if (!upstream || !sealed) return undefined;
      const next = { ...upstream, sealedClientSecret: resealEnvelope(kek, sealed, upstreamSecretContext(doc.name)) };
      return moved(doc, { ...doc, auth: { ...doc.auth, upstream: next } }, kek.isStale(sealed));
    },
    expect: byVersion,
    written: () => bumpRegistryVersion(state),
  };
}
