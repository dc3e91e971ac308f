// Failures between the edge and a service that are nobody's request's fault: the service's process
// died or restarted mid-call, its address does not answer, or it refused the edge's internal
// credential. connect-node reports a cut connection as ABORTED or INTERNAL with the socket's text
// ("read ECONNRESET"), or as CANCELED when the socket closed cleanly under the call (a call its own
// caller cancelled stays CANCELED); here each becomes UNAVAILABLE (retryable) with a plain message,
// marked so every surface can say what happened, and an idempotent read is tried once more first.
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import type { ServiceName } from '../services/common/config.ts';
import type { Logger } from '../services/common/log.ts';
import { REASONS, reasonOf } from '../services/common/rpc/reasons.ts';

/** Metadata key of the mark, in the failure the edge throws (never sent anywhere). */
export const EDGE_FAILURE_KEY = 'mindgate-edge-failure';

/** `unreachable`: the transport failed; `credential-refused`: the service refused INTERNAL_TOKEN. */
export type EdgeFailure = 'unreachable' | 'credential-refused';

export function edgeFailureOf(err: unknown): EdgeFailure | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  const mark = err.metadata.get(EDGE_FAILURE_KEY);
  return mark === 'unreachable' || mark === 'credential-refused' ? mark : undefined;
}

/**
 * Reads that may be sent twice: they change nothing. A write is never repeated here, since the
 * edge cannot know whether the first attempt was applied before the connection was cut.
 */
export const IDEMPOTENT_READS: ReadonlySet<string> = new Set([
  'mindgate.brain.v1.BrainService/GetMemories',
  'mindgate.brain.v1.BrainService/SearchMemories',
  'mindgate.brain.v1.BrainService/RecallContext',
  'mindgate.brain.v1.BrainService/ListContradictions',
  'mindgate.brain.v1.BrainService/ListQuestions',
  'mindgate.brain.v1.BrainService/GetUsage',
  'mindgate.brain.v1.BrainService/ListMemories',
  'mindgate.entitygraph.v1.EntityGraphService/GetEntity',
  'mindgate.entitygraph.v1.EntityGraphService/ListEntities',
  'mindgate.entitygraph.v1.EntityGraphService/SearchEntities',
  'mindgate.entitygraph.v1.EntityGraphService/ListRelationships',
  'mindgate.entitygraph.v1.EntityGraphService/FindPaths',
  'mindgate.entitygraph.v1.EntityGraphService/GetAffectedEntities',
  'mindgate.entitygraph.v1.EntityGraphService/ExtractRelationships',
  'mindgate.agents.v1.AgentsService/ListAgents',
  // Its one write, the key's last-use time, is the same whether it runs once or twice.
  'mindgate.agents.v1.ApiKeysService/VerifyApiKey',
  'mindgate.agents.v1.ApiKeysService/ListApiKeys',
  'mindgate.agents.v1.AuditService/ListEvents',
  'mindgate.agents.v1.OrganizationsService/GetOrganization',
  'mindgate.agents.v1.OrganizationsService/ListOrganizations',
  'mindgate.agents.v1.OrganizationsService/GetMembership',
  'mindgate.agents.v1.OrganizationsService/ListMembers',
  'mindgate.agents.v1.OrganizationsService/CountMembers',
  'mindgate.agents.v1.TeamsService/GetTeam',
  'mindgate.agents.v1.TeamsService/ListTeams',
  'mindgate.agents.v1.TeamsService/ListTeamMembers',
  'mindgate.agents.v1.InvitationsService/ListInvitations',
  'mindgate.agents.v1.InvitationsService/GetInvitationByToken',
  'mindgate.billing.v1.BillingService/GetEntitlements',
  'grpc.health.v1.Health/Check',
]);

/** Node's error codes of a connection that failed or was cut (not an answer of the service). */
const TRANSPORT_CODE = /^(E[A-Z]+|ERR_HTTP2_\w+|ERR_STREAM_\w+|UND_ERR_\w+)$/;

/** Whether `err` is the transport failing rather than the service answering. */
export function isTransportFailure(err: ConnectError): boolean {
  if (err.code === Code.DeadlineExceeded || err.code === Code.Canceled) return false;
  // A refused stream (a server going away) or a reset other than a cancel.
  if (/^http\/2 stream closed with error code (?!CANCEL)/.test(err.rawMessage)) return true;
  for (let e: unknown = err.cause, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && TRANSPORT_CODE.test(code)) return true;
  }
  return false;
}

/**
 * A stream the edge did not cancel, reset with CANCEL: how node's HTTP/2 client closes the streams
 * of a session whose peer went away (a service process killed mid-call), when the socket closed
 * cleanly rather than with a reset.
 */
function isCancelledUnasked(err: ConnectError, signal: AbortSignal): boolean {
  return err.code === Code.Canceled && !signal.aborted && /^http\/2 stream closed with error code CANCEL\b/.test(err.rawMessage);
}

function marked(message: string, mark: EdgeFailure): ConnectError {
  return new ConnectError(message, Code.Unavailable, { [EDGE_FAILURE_KEY]: mark });
}

/** The failure the edge throws for `err`, or undefined when `err` is the service's own answer. */
function classify(err: unknown, service: ServiceName, signal: AbortSignal): { failure: ConnectError; retry: boolean } | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  if (err.code === Code.Unauthenticated && reasonOf(err) === REASONS.internalCredential) {
    const message =
      `the platform is misconfigured: the ${service} service refused this server's internal credential ` +
      '(an operator must give every process the same INTERNAL_TOKEN); your own credentials are not the problem';
    return { failure: marked(message, 'credential-refused'), retry: false };
  }
  if (isTransportFailure(err) || isCancelledUnasked(err, signal)) {
    return { failure: marked(`the ${service} service is unavailable; retry shortly`, 'unreachable'), retry: true };
  }
  // A service that drains refuses new calls: another replica, or the restarted one, answers.
  return { failure: err, retry: err.code === Code.Unavailable && reasonOf(err) === REASONS.shuttingDown };
}

/** Marks transport failures and credential refusals, and tries an idempotent read once more. */
export function createServiceFailureInterceptor(service: ServiceName, logger: Logger): Interceptor {
  /** What the caller gets for `err`, logged once: the service's own answers pass unchanged. */
  const settle = (err: unknown, rpc: string, signal: AbortSignal): unknown => {
    const classified = classify(err, service, signal);
    if (!classified) return err;
    const mark = edgeFailureOf(classified.failure);
    if (mark === 'credential-refused') logger.error({ service, rpc }, classified.failure.rawMessage);
    if (mark === 'unreachable')
      logger.warn({ service, rpc, reason: (err as Error).message }, `${rpc}: the ${service} service is unreachable`);
    return classified.failure;
  };
  return (next) => async (req) => {
    const rpc = `${req.service.typeName}/${req.method.name}`;
    try {
      return await next(req);
    } catch (err) {
      const retry = classify(err, service, req.signal)?.retry && !req.stream && IDEMPOTENT_READS.has(rpc) && !req.signal.aborted;
      if (!retry) throw settle(err, rpc, req.signal);
      logger.warn({ service, rpc, reason: (err as Error).message }, `${rpc} failed in transit; trying once more`);
    }
    try {
      return await next(req);
    } catch (again) {
      throw settle(again, rpc, req.signal);
    }
  };
}
