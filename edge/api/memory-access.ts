// What a caller of the Agents API's memory and graph operations may reach of the organization's
// memory: the same MemoryAccess as at the Brain MCP endpoint (edge/mcp/brain-access.ts), so a
// member of a narrowed team, or a key naming one, reaches over REST exactly what it reaches over
// MCP. Resolved once per request.
import type { Client } from '@connectrpc/connect';
import type { MemoryAccess } from '../../gen/mindgate/brain/v1/access_pb.js';
import type { BrainService } from '../../gen/mindgate/brain/v1/brain_pb.js';
import type { AppContext } from '../context.ts';
import type { AnyApiRouteContext } from '../http/api-route.ts';
import { type BrainCaller, narrowedBrain, resolveMemoryAccess } from '../mcp/brain-access.ts';
import { callerOf } from './access.ts';
import { ForbiddenError } from './auth.ts';

const resolved = new WeakMap<AnyApiRouteContext, Promise<MemoryAccess | undefined>>();

function brainCallerOf(c: AnyApiRouteContext): BrainCaller {
  const caller = callerOf(c);
  const { organizationId } = caller;
  if (caller.kind === 'user') return { kind: 'user', organizationId, userId: caller.subject };
  if (caller.kind === 'api_key') {
    return {
      kind: 'api_key',
      organizationId,
      keyId: caller.subject,
      prefix: caller.keyPrefix ?? '',
      scopes: caller.scopes ?? [],
      teamId: caller.teamId ?? '',
    };
  }
  return { kind: 'machine', organizationId };
}

/** The caller's access; undefined when it reaches every memory. */
export function memoryAccessOf(ctx: AppContext, c: AnyApiRouteContext): Promise<MemoryAccess | undefined> {
  let access = resolved.get(c);
  if (!access) {
    access = resolveMemoryAccess(ctx, brainCallerOf(c));
    resolved.set(c, access);
  }
  return access;
}

/** The brain client that carries the caller's access on every call (the brain enforces it). */
export async function brainOf(ctx: AppContext, c: AnyApiRouteContext): Promise<Client<typeof BrainService>> {
  return narrowedBrain(ctx.clients.brain, await memoryAccessOf(ctx, c));
}

/** The graph spans the whole memory (its citations name memories): refused to a narrowed caller. */
export async function requireWholeMemory(ctx: AppContext, c: AnyApiRouteContext): Promise<void> {
  const access = await memoryAccessOf(ctx, c);
  if (access?.restricted) {
    throw new ForbiddenError(
      "the memory graph spans the whole organization's memory; your access is narrowed to part of it (team Brain access)",
    );
  }
}
