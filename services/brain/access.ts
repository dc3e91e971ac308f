// What one call may reach of an organization's memory (proto/mindgate/brain/v1/access.proto):
// everything, unless the edge sent a MemoryAccess in the `mindgate-memory-access-bin` header
// for a narrowed caller (a member of a team with Brain access, an API key naming such a team, a
// read-only key). Handlers ask `allows` before they show a memory, and `requireWrite` before
// they change one; a refusal says what the caller may reach, so a model can correct itself.
import { Code, ConnectError } from '@connectrpc/connect';
import { decodeBinaryHeader } from '@connectrpc/connect';
import { type MemoryAccess as MemoryAccessMessage, MemoryAccessSchema } from '../../gen/mindgate/brain/v1/access_pb.js';
import { Namespace } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { NamespaceName } from './memory-record.ts';

export const MEMORY_ACCESS_HEADER = 'mindgate-memory-access-bin';

const NAMES: Record<number, NamespaceName> = { [Namespace.KNOWLEDGE]: 'knowledge', [Namespace.EPISODES]: 'episodes' };

interface Rule {
  namespaces: Set<NamespaceName> | null;
  prefixes: string[] | null;
  origin: string;
}

export class MemoryAccess {
  /** A call without the header: the whole organization, reads and writes. */
  static readonly everything = new MemoryAccess(false, [], false, '');

  readonly restricted: boolean;
  readonly readOnly: boolean;
  private readonly rules: Rule[];
  private readonly holder: string;

  private constructor(restricted: boolean, rules: Rule[], readOnly: boolean, holder: string) {
    this.restricted = restricted;
    this.rules = rules;
    this.readOnly = readOnly;
    this.holder = holder;
  }

  static fromMessage(m: MemoryAccessMessage): MemoryAccess {
    const rules = m.rules.map((r) => ({
      namespaces: r.namespaces.length ? new Set(r.namespaces.map((n) => NAMES[n]).filter(Boolean)) : null,
      prefixes: r.keyPrefixes.length ? [...r.keyPrefixes] : null,
      origin: r.origin,
    }));
    if (!m.restricted && !m.readOnly) return MemoryAccess.everything;
    return new MemoryAccess(m.restricted, rules, m.readOnly, m.holder);
  }

  /** The access a request's headers carry; INVALID_ARGUMENT for a header that does not decode. */
  static fromHeaders(headers: Headers): MemoryAccess {
    const value = headers.get(MEMORY_ACCESS_HEADER);
    if (value === null) return MemoryAccess.everything;
    try {
      return MemoryAccess.fromMessage(decodeBinaryHeader(value, MemoryAccessSchema));
    } catch {
      throw new ConnectError(`${MEMORY_ACCESS_HEADER}: is not a binary MemoryAccess message`, Code.InvalidArgument);
    }
  }

  /** Whether the memory (namespace, key) is reachable. */
  allows(namespace: NamespaceName, key: string): boolean {
    if (!this.restricted) return true;
    return this.rules.some(
      (r) => (r.namespaces === null || r.namespaces.has(namespace)) && (r.prefixes === null || r.prefixes.some((p) => key.startsWith(p))),
    );
  }

  /** Whether anything of the namespace is reachable. */
  allowsNamespace(namespace: NamespaceName): boolean {
    return !this.restricted || this.rules.some((r) => r.namespaces === null || r.namespaces.has(namespace));
  }

  /** The key test of one namespace for searches, or undefined when every key of it is reachable. */
  keyFilter(namespace: NamespaceName): ((key: string) => boolean) | undefined {
    if (!this.restricted) return undefined;
    return (key) => this.allows(namespace, key);
  }

  /** Whether every memory of a contradiction or question (refs "namespace/key") is reachable. */
  allowsRefs(refs: readonly string[]): boolean {
    if (!this.restricted) return true;
    return refs.every((ref) => {
      const slash = ref.indexOf('/');
      return this.allows(ref.slice(0, slash) as NamespaceName, ref.slice(slash + 1));
    });
  }

  /** Refuses a write by a read-only caller, or of memories outside the access. */
  requireWrite(refs: readonly { namespace: NamespaceName; key: string }[]): void {
    if (this.readOnly) {
      throw new ConnectError(
        `${this.who()} may only read memories: writing needs an API key with the memories scope`,
        Code.PermissionDenied,
      );
    }
    const outside = refs.filter((r) => !this.allows(r.namespace, r.key));
    if (outside.length) {
      throw new ConnectError(
        `${outside.map((r) => `${r.namespace}/${r.key}`).join(', ')} ${outside.length > 1 ? 'are' : 'is'} outside what ${this.who()} may reach (${this.describe()})`,
        Code.PermissionDenied,
      );
    }
  }

  /** Refuses a search of a namespace of which nothing is reachable. */
  requireNamespace(namespace: NamespaceName): void {
    if (!this.allowsNamespace(namespace)) {
      throw new ConnectError(`${this.who()} may not reach the ${namespace} namespace (${this.describe()})`, Code.PermissionDenied);
    }
  }

  /** What is reachable, in words: "knowledge under deploy/ or runbooks/ (team Support)". */
  describe(): string {
    if (!this.restricted) return 'every memory of the organization';
    if (!this.rules.length) return 'no memory';
    return this.rules
      .map((r) => {
        const where = r.namespaces ? [...r.namespaces].join(' and ') : 'both namespaces';
        const keys = r.prefixes ? ` under ${r.prefixes.join(' or ')}` : '';
        return `${where}${keys}${r.origin ? ` (${r.origin})` : ''}`;
      })
      .join('; ');
  }

  private who(): string {
    return this.holder || 'this caller';
  }
}
