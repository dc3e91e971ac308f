// What a caller of the Brain MCP endpoint may reach of its organization's memory, sent to the
// brain service with every call as a MemoryAccess header (services/brain/access.ts enforces it):
// a member of teams with Brain access reaches what those teams allow; an API key reaches what
// its team allows, and only reads without the memories scope; client_credentials tokens and the
// operator's gateway key reach the whole organization.
import { create } from '@bufbuild/protobuf';
import { encodeBinaryHeader, type Client } from '@connectrpc/connect';
import { MemoryAccessRuleSchema, MemoryAccessSchema, type MemoryAccess } from '../../gen/mindgate/brain/v1/access_pb.js';
import { Namespace, type BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { ResolveBrainAccessResponse } from '../../gen/mindgate/agents/v1/teams_pb.js';
import { scopesAllow } from '../../services/common/api-key-scopes.ts';
import type { AppContext } from '../context.ts';

type HeadersLike = ConstructorParameters<typeof Headers>[0];

export const MEMORY_ACCESS_HEADER = 'mindgate-memory-access-bin';

/** Who calls the Brain, as far as access goes. */
export type BrainCaller =
  | { kind: 'user'; organizationId: string; userId: string }
  | { kind: 'api_key'; organizationId: string; keyId: string; prefix: string; scopes: string[]; teamId: string }
  | { kind: 'machine'; organizationId: string };

const NAMESPACES: Record<string, Namespace> = { knowledge: Namespace.KNOWLEDGE, episodes: Namespace.EPISODES };

function rulesOf(res: ResolveBrainAccessResponse) {
  return res.rules.map((r) =>
    create(MemoryAccessRuleSchema, {
      namespaces: (r.access?.namespaces ?? []).map((n) => NAMESPACES[n]).filter((n) => n !== undefined),
      keyPrefixes: r.access?.keyPrefixes ?? [],
      origin: `team ${r.teamName}`,
    }),
  );
}

/** The caller's access, or undefined when it reaches everything (no header is sent). */
export async function resolveMemoryAccess(ctx: AppContext, caller: BrainCaller): Promise<MemoryAccess | undefined> {
  if (caller.kind === 'machine') return undefined;
  if (caller.kind === 'user') {
    const res = await ctx.clients.teams.resolveBrainAccess({
      organizationId: caller.organizationId,
      holder: { case: 'userId', value: caller.userId },
    });
    return res.restricted
      ? create(MemoryAccessSchema, { restricted: true, rules: rulesOf(res), holder: 'you (through your teams)' })
      : undefined;
  }
  const readOnly = !scopesAllow(caller.scopes, 'memories');
  const res = caller.teamId
    ? await ctx.clients.teams.resolveBrainAccess({
        organizationId: caller.organizationId,
        holder: { case: 'teamId', value: caller.teamId },
      })
    : undefined;
  if (!readOnly && !res?.restricted) return undefined;
  return create(MemoryAccessSchema, {
    restricted: res?.restricted ?? false,
    rules: res ? rulesOf(res) : [],
    readOnly,
    holder: `API key ${caller.prefix}…`,
  });
}

/** The brain client with the access header on every call. */
export function narrowedBrain(brain: Client<typeof BrainService>, access: MemoryAccess | undefined): Client<typeof BrainService> {
  if (!access) return brain;
  const header = encodeBinaryHeader(access, MemoryAccessSchema);
  return new Proxy(brain, {
    get(target, method: string) {
      const call = target[method as keyof typeof target] as ((req: unknown, options?: { headers?: HeadersLike }) => unknown) | undefined;
      // Only the RPC methods: anything else (`then`, looked up when the client is awaited) as is.
      if (typeof call !== 'function') return call;
      return (req: unknown, options: { headers?: HeadersLike } = {}) => {
        const headers = new Headers(options.headers);
        headers.set(MEMORY_ACCESS_HEADER, header);
        return call(req, { ...options, headers });
      };
    },
  });
}
