// Typed Connect clients of the internal services. In one process they use in-memory transports
// that run the very same routes, gate and interceptors as the gRPC ports; when a service runs
// elsewhere they use gRPC over HTTP/2.
import type { DescService } from '@bufbuild/protobuf';
import { createClient, createRouterTransport, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AgentsService } from '../gen/mindgate/agents/v1/agents_pb.js';
import { ApiKeysService } from '../gen/mindgate/agents/v1/api_keys_pb.js';
import { AuditService } from '../gen/mindgate/agents/v1/audit_pb.js';
import { InvitationsService } from '../gen/mindgate/agents/v1/invitations_pb.js';
import { TeamsService } from '../gen/mindgate/agents/v1/teams_pb.js';
import { OrganizationsService } from '../gen/mindgate/agents/v1/organizations_pb.js';
import { GatewayKeysService } from '../gen/mindgate/agents/v1/gateway_keys_pb.js';
import { GatewayRegistryService } from '../gen/mindgate/agents/v1/gateway_registry_pb.js';
import { McpServersService } from '../gen/mindgate/agents/v1/mcp_servers_pb.js';
import { UsersService } from '../gen/mindgate/agents/v1/users_pb.js';
import { RunUsageService } from '../gen/mindgate/agents/v1/run_usage_pb.js';
import { RunsService } from '../gen/mindgate/agents/v1/runs_pb.js';
import { PlaybooksService } from '../gen/mindgate/agents/v1/playbooks_pb.js';
import { ThreadsService } from '../gen/mindgate/agents/v1/threads_pb.js';
import { JobsService } from '../gen/mindgate/agents/v1/jobs_pb.js';
import { AlertsService } from '../gen/mindgate/agents/v1/alerts_pb.js';
import { EvaluationService } from '../gen/mindgate/agents/v1/evaluation_pb.js';
import { WebhooksService } from '../gen/mindgate/agents/v1/webhooks_pb.js';
import { EventOutboxService } from '../gen/mindgate/events/v1/outbox_pb.js';
import { BillingService } from '../gen/mindgate/billing/v1/billing_pb.js';
import { BrainPassService } from '../gen/mindgate/billing/v1/brain_pass_pb.js';
import { CheckoutService } from '../gen/mindgate/billing/v1/checkout_pb.js';
import { InvoicesService } from '../gen/mindgate/billing/v1/invoices_pb.js';
import { BrainService } from '../gen/mindgate/brain/v1/brain_pb.js';
import { SeedingService } from '../gen/mindgate/brain/v1/seeding_pb.js';
import { Health } from '../gen/grpc/health/v1/health_pb.js';
import { EntityGraphService } from '../gen/mindgate/entitygraph/v1/entity_graph_pb.js';
import type { ServiceName } from '../services/common/config.ts';
import type { Logger } from '../services/common/log.ts';
import type { Metrics } from '../services/common/metrics/registry.ts';
import { INTERNAL_TOKEN_HEADER, REQUEST_ID_HEADER } from '../services/common/rpc/context.ts';
import { createRpcRoutes, rpcRouterOptions, type RpcServiceModule } from '../services/common/rpc/server.ts';
import { requestScope } from './http/request-context.ts';
import { createServiceFailureInterceptor } from './service-failures.ts';

export interface ServiceClients {
  brain: Client<typeof BrainService>;
  /** Memory seeding runs (served by the brain). */
  seeding: Client<typeof SeedingService>;
  entityGraph: Client<typeof EntityGraphService>;
  agents: Client<typeof AgentsService>;
  /** User accounts, how they sign in, e-mail verification (served by the agents service). */
  users: Client<typeof UsersService>;
  /** Organizations and memberships (served by the agents service). */
  organizations: Client<typeof OrganizationsService>;
  /** API keys of the Agents API (served by the agents service). */
  apiKeys: Client<typeof ApiKeysService>;
  /** The audit log of the Agents API (served by the agents service). */
  audit: Client<typeof AuditService>;
  /** Invitations into organizations (served by the agents service). */
  invitations: Client<typeof InvitationsService>;
  /** Teams and their members (served by the agents service). */
  teams: Client<typeof TeamsService>;
  /** MCP servers of the gateway's registry managed through the Agents API (served by the agents service). */
  mcpServers: Client<typeof McpServersService>;
  /** The operator's gateway keys (served by the agents service). */
  gatewayKeys: Client<typeof GatewayKeysService>;
  /** The versioned registry snapshot each gateway replica polls (served by the agents service). */
  gatewayRegistry: Client<typeof GatewayRegistryService>;
  /** Investigations: threads and their messages (served by the agents service). */
  threads: Client<typeof ThreadsService>;
  /** Runs on threads, their queue and leases (served by the agents service). */
  runs: Client<typeof RunsService>;
  /** Runs queued this month, as the plan's runs_per_month counts them (served by the agents service). */
  runUsage: Client<typeof RunUsageService>;
  /** Scheduled jobs and their executions (served by the agents service). */
  jobs: Client<typeof JobsService>;
  /** Playbooks, their versions, and the runs started from them (served by the agents service). */
  playbooks: Client<typeof PlaybooksService>;
  /** Alert sources, rules and alert events (served by the agents service). */
  alerts: Client<typeof AlertsService>;
  /** Evaluation datasets, evaluations and their queue (served by the agents service). */
  evaluation: Client<typeof EvaluationService>;
  billing: Client<typeof BillingService>;
  /** Webhook endpoints, deliveries and publishing (served by the agents service). */
  webhooks: Client<typeof WebhooksService>;
  /** Each event-producing service's outbox, by service: what the webhooks relay takes events from. */
  outboxes: { brain: Client<typeof EventOutboxService>; agents: Client<typeof EventOutboxService> };
  /** Checkouts and the payment provider's webhooks (served by the billing service). */
  checkouts: Client<typeof CheckoutService>;
  /** Invoices (served by the billing service). */
  invoices: Client<typeof InvoicesService>;
  /** The brain-pass's challenges and settlements (served by the billing service). */
  brainPass: Client<typeof BrainPassService>;
  /** grpc.health.v1 client of a service (the Web API's platform status measures with it). */
  health(service: ServiceName): Client<typeof Health>;
}

/** Where a service is reached: a module run in this process, or a remote host:port. */
export type ServiceTarget = { module: RpcServiceModule } | { address: string };

export interface ServiceClientsOptions {
  targets: Record<ServiceName, ServiceTarget>;
  internalToken: string;
  logger: Logger;
  /** Deadline of each internal call. */
  timeoutMs?: number;
  /** Counts the calls that in-process services handle, as their gRPC ports do. */
  metrics?: Metrics;
}

/** Adds the internal credential and the current request id to every outgoing call. */
function credentialInterceptor(internalToken: string): Interceptor {
  return (next) => (req) => {
    req.header.set(INTERNAL_TOKEN_HEADER, internalToken);
    const scope = requestScope.getStore();
    if (scope) req.header.set(REQUEST_ID_HEADER, scope.requestId);
    return next(req);
  };
}

function transportFor(name: ServiceName, target: ServiceTarget, options: ServiceClientsOptions): Transport {
  const interceptors = [credentialInterceptor(options.internalToken)];
  const defaultTimeoutMs = options.timeoutMs ?? 30_000;
  if ('address' in target) {
    // Only a network can cut a call or carry another process's refusal of the credential.
    const remote = [createServiceFailureInterceptor(name, options.logger), ...interceptors];
    return createGrpcTransport({ baseUrl: `http://${target.address}`, interceptors: remote, defaultTimeoutMs });
  }
  return createRouterTransport(createRpcRoutes({ module: target.module }), {
    transport: { interceptors, defaultTimeoutMs },
    router: rpcRouterOptions({
      module: target.module,
      internalToken: options.internalToken,
      logger: options.logger,
      metrics: options.metrics,
    }),
  });
}

export function createServiceClients(options: ServiceClientsOptions): ServiceClients {
  const client = <S extends DescService>(service: S, name: ServiceName) =>
    createClient(service, transportFor(name, options.targets[name], options));
  const healthClients = new Map<ServiceName, Client<typeof Health>>();
  return {
    brain: client(BrainService, 'brain'),
    seeding: client(SeedingService, 'brain'),
    entityGraph: client(EntityGraphService, 'entity-graph'),
    agents: client(AgentsService, 'agents'),
    users: client(UsersService, 'agents'),
    organizations: client(OrganizationsService, 'agents'),
    apiKeys: client(ApiKeysService, 'agents'),
    audit: client(AuditService, 'agents'),
    invitations: client(InvitationsService, 'agents'),
    teams: client(TeamsService, 'agents'),
    mcpServers: client(McpServersService, 'agents'),
    gatewayKeys: client(GatewayKeysService, 'agents'),
    gatewayRegistry: client(GatewayRegistryService, 'agents'),
    threads: client(ThreadsService, 'agents'),
    runs: client(RunsService, 'agents'),
    runUsage: client(RunUsageService, 'agents'),
    jobs: client(JobsService, 'agents'),
    playbooks: client(PlaybooksService, 'agents'),
    alerts: client(AlertsService, 'agents'),
    evaluation: client(EvaluationService, 'agents'),
    billing: client(BillingService, 'billing'),
    webhooks: client(WebhooksService, 'agents'),
    outboxes: { brain: client(EventOutboxService, 'brain'), agents: client(EventOutboxService, 'agents') },
    checkouts: client(CheckoutService, 'billing'),
    invoices: client(InvoicesService, 'billing'),
    brainPass: client(BrainPassService, 'billing'),
    health(name) {
      let health = healthClients.get(name);
      if (!health) healthClients.set(name, (health = client(Health, name)));
      return health;
    },
  };
}
