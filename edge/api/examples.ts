// Examples of the Agents API's request and response bodies, by the title of their schema, for the
// OpenAPI document (index.ts puts each on the media types that use the schema; a list's example
// is its item's, in the list envelope). test/integration/api-openapi.test.ts checks that every
// JSON body of every operation has one and that each one is valid against its schema; the
// schema fuzzer also sends the request examples.
import { REGISTRY_EXAMPLES } from './registry-examples.ts';

const ORG = 'org_3hT9xQ2mZr8vKp1L';
const USER = 'usr_8fJ2kLm4Pq9RsT1v';
const AT = '2026-03-02T09:30:00.000Z';
const LATER = '2026-03-09T09:30:00.000Z';

const member = { user_id: USER, organization_id: ORG, role: 'admin', created_at: AT, updated_at: LATER };
const apiKey = {
  id: 'k7Hq2Lr9Xv3Mn5Pw8',
  organization_id: ORG,
  name: 'CI pipeline',
  prefix: 'mg_k7Hq2Lr9',
  created_by: USER,
  created_at: AT,
  rotated_at: null,
  last_used_at: LATER,
  scopes: ['memories'],
  team_id: null,
};
const confidentialClient = {
  client_id: 'cc_5f1e9a3b7c2d4e6f8a0b1c2d',
  client_name: 'Nightly sync',
  organization_id: ORG,
  grant_types: ['client_credentials'],
  token_endpoint_auth_method: 'client_secret_basic',
  created_at: AT,
  secret_rotated_at: null,
};

const THREAD = 'thr_Qm8x2LkP0aZr7Tn4Vw1s';
const RUN = 'run_Zt3pK9qW1xLm7Ns0Ve2a';
const LEASE = '3b0f2c4e-8a1d-4f6b-9c2e-7d5a1b3c9e0f';
const thread = {
  id: THREAD,
  organization_id: ORG,
  title: 'Checkout latency above 2 s since 09:40',
  status: 'open',
  created_by: USER,
  message_count: 2,
  created_at: AT,
  updated_at: AT,
};
const threadMessage = {
  id: 'msg_b2VwQ1x9LmT0aRk4Zs7n',
  thread_id: THREAD,
  role: 'user',
  content: 'p99 of /checkout doubled after the 09:35 deploy. What changed?',
  author: USER,
  run_id: null,
  created_at: AT,
};
const run = {
  id: RUN,
  organization_id: ORG,
  thread_id: THREAD,
  status: 'succeeded',
  executor: 'llm',
  instructions: '',
  agent_id: 'llm:edge-0:1f2e3d4c',
  attempt: 1,
  lease_expires_at: null,
  timeout_seconds: 3600,
  usage: { input_tokens: 1840, output_tokens: 312, tool_calls: 1, duration_ms: 6210 },
  model: 'gpt-4o-mini',
  output: 'The 09:35 deploy lowered the payment client timeout; roll back its config.',
  error: '',
  step_count: 3,
  created_by: USER,
  retry_of: null,
  created_at: AT,
  started_at: AT,
  finished_at: AT,
};
const runStep = {
  index: 1,
  kind: 'brain_read',
  name: 'brain_recall',
  ok: true,
  arguments: { tool_call_id: 'call_1', arguments: '{"task":"checkout latency after a deploy"}' },
  result: {
    context: '…',
    memories: [{ namespace: 'knowledge', key: 'runbooks/checkout-latency', title: 'Checkout latency after deploys' }],
  },
  error: '',
  input_tokens: 0,
  output_tokens: 0,
  attempt: 1,
  started_at: AT,
  finished_at: AT,
};

const professionalPlan = {
  key: 'professional',
  name: 'Professional',
  description: "The whole organization's memory, with the entity graph and higher limits.",
  trial_days: 14,
  prices: { month: { currency: 'EUR', unit_amount: 4900 }, year: { currency: 'EUR', unit_amount: 49000 } },
  entitlements: {
    entity_graph: true,
    webhook_events_per_month: 100000,
    max_memories: 2000000,
    max_members: null,
    api_requests_per_minute: 3000,
    runs_per_month: 10000,
  },
};

// The memory graph's examples tell one story: a memory on Checkout's dependencies asserts two
// relationships (Checkout depends on the Payments API, which stores its data in the Ledger), and
// disagrees with a runbook.
const MEMORY_TITLE = 'Checkout dependencies';
const MEMORY_CONTENT = 'Checkout calls the Payments API synchronously for every order; the Payments API stores its records in the Ledger.';
const memory = {
  namespace: 'knowledge',
  key: 'services/checkout',
  title: MEMORY_TITLE,
  content: MEMORY_CONTENT,
  tags: ['architecture'],
  entities: ['Checkout', 'Payments API', 'Ledger'],
  version: 2,
  created_at: AT,
  updated_at: LATER,
  written_by: { client_id: 'mindgate-api', user_id: USER, client_name: 'Mindgate API' },
  feedback: { worked: 3, failed: 0 },
  supersedes: null,
  superseded_by: null,
};
const memoryFields = {
  title: MEMORY_TITLE,
  content: MEMORY_CONTENT,
  tags: ['architecture'],
  entities: ['Checkout', 'Payments API', 'Ledger'],
  relationships: [
    { subject: 'Checkout', predicate: 'depends_on', object: 'Payments API' },
    { subject: 'Payments API', predicate: 'stores_data_in', object: 'Ledger' },
  ],
};
const CONTRADICTION_ID = 'ctr_sx4kzrjk2i3ro5nsmlf3';
const RESOLUTION = 'Checkout calls the Payments API synchronously; the runbook was written before the queue was removed.';

const checkout = {
  id: 'checkout',
  name: 'Checkout',
  kind: 'service',
  aliases: [],
  description: "The web shop's order checkout.",
  version: 1,
  relationship_count: 1,
  created_at: AT,
  updated_at: AT,
};
const paymentsApi = {
  id: 'payments-api',
  name: 'Payments API',
  kind: 'service',
  aliases: ['PGW', 'Payments'],
  description: 'Takes the card payment of every order.',
  version: 3,
  relationship_count: 2,
  created_at: AT,
  updated_at: LATER,
};
const ledger = {
  id: 'ledger',
  name: 'Ledger',
  kind: 'component',
  aliases: [],
  description: '',
  version: 1,
  relationship_count: 1,
  created_at: AT,
  updated_at: AT,
};
const citation = {
  namespace: 'knowledge',
  key: 'services/checkout',
  version: 2,
  origin: 'explicit',
  title: MEMORY_TITLE,
  asserted_at: LATER,
};
const dependsOn = {
  id: 'rel_ani4pjqnttcz7stzzl64bcit6l',
  subject_id: 'checkout',
  subject_name: 'Checkout',
  predicate: 'depends_on',
  object_id: 'payments-api',
  object_name: 'Payments API',
  citations: [citation],
  citation_count: 1,
  created_at: AT,
};
const storesDataIn = {
  ...dependsOn,
  id: 'rel_6drrgsbkey3gcydk7yjycq7e2r',
  subject_id: 'payments-api',
  subject_name: 'Payments API',
  predicate: 'stores_data_in',
  object_id: 'ledger',
  object_name: 'Ledger',
};

export const EXAMPLES: Record<string, unknown> = {
  Problem: {
    type: 'tag:mindgate.dev,2026:problem/validation-failed',
    title: 'Unprocessable Content',
    status: 422,
    detail: 'The request is not valid.',
    instance: `/organizations/${ORG}/teams`,
    errors: [{ loc: ['body', 'name'], msg: 'must not be empty', type: 'value_error' }],
  },
  Health: { status: 'ok', service: 'api' },
  ProtectedResourceMetadata: {
    resource: 'https://api.example.com',
    authorization_servers: ['https://auth.example.com'],
    scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
    bearer_methods_supported: ['header'],
    resource_name: 'Mindgate Agents API',
  },
  OpenApiDocument: { openapi: '3.1.0', info: { title: 'Mindgate Agents API', version: '1.0.0' }, paths: {}, components: {} },
  Organization: {
    id: ORG,
    name: 'Acme',
    slug: 'acme',
    brain_id: 'brain_3hT9xQ2mZr8vKp1L',
    role: 'owner',
    current: true,
    settings: { audit_retention_days: 365 },
    created_at: AT,
    updated_at: LATER,
  },
  OrganizationDeletion: { organization_id: ORG, state: 'deleting', requested_at: AT, purge_after: '2026-03-02T09:30:05.000Z' },
  OwnershipTransfer: { from: { ...member, role: 'admin' }, to: { ...member, user_id: 'usr_2aB4cD6eF8gH0iJk', role: 'owner' } },
  Usage: {
    plan: 'professional',
    plan_name: 'Professional',
    period: { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' },
    memories: { used: 1240, limit: 2000000 },
    members: { used: 12, limit: null },
    api_calls: { used: 5310, limit: null },
    entitlements: professionalPlan.entitlements,
  },
  Plan: professionalPlan,
  PlanList: { plans: [professionalPlan], next_page_token: null, catalogue_version: '2026-07-01', currency: 'EUR' },
  Subscription: {
    organization_id: ORG,
    plan: 'professional',
    plan_name: 'Professional',
    status: 'active',
    interval: 'month',
    unit_amount: 4900,
    currency: 'EUR',
    entity: 'eu',
    country: 'NL',
    provider: 'stripe',
    trial_end: null,
    current_period_start: '2026-03-01T09:30:00.000Z',
    current_period_end: '2026-04-01T09:30:00.000Z',
    cancel_at_period_end: false,
    payment_method_on_file: true,
    catalogue_version: '2026-07-01',
    entitlements: professionalPlan.entitlements,
  },
  Checkout: {
    id: 'chk_Q7mX2pLr9Tz4Vb8Nk3Wd6Yh1',
    organization_id: ORG,
    plan: 'professional',
    interval: 'month',
    status: 'open',
    url: 'https://checkout.stripe.com/c/pay/cs_test_a1B2c3D4',
    provider: 'stripe',
    currency: 'EUR',
    entity: 'eu',
    entity_name: 'Mindgate Europe B.V.',
    country: 'NL',
    unit_amount: 4900,
    trial_days: 14,
    trial_end: '2026-03-15T09:30:00.000Z',
    created_at: AT,
    expires_at: '2026-03-02T09:30:00.000Z',
    completed_at: null,
  },
  Invoice: {
    id: 'in_Xk3Lm8Pq2Rz7Vb1Nd4Wy6T',
    status: 'paid',
    currency: 'EUR',
    amount_due: 4900,
    amount_paid: 4900,
    entity: 'eu',
    provider: 'manual',
    lines: [{ description: 'Professional, monthly (1 Mar 2026 to 1 Apr 2026)', amount: 4900 }],
    period_start: '2026-03-01T09:30:00.000Z',
    period_end: '2026-04-01T09:30:00.000Z',
    created_at: AT,
    due_at: '2026-03-15T09:30:00.000Z',
    paid_at: LATER,
    hosted_url: null,
  },
  WebhookReceipt: { received: true, event_id: 'evt_1Q2w3E4r5T6y7U8i', event_type: 'invoice.paid', applied: true },
  Member: member,
  ApiKey: apiKey,
  ApiKeyWithSecret: { api_key: apiKey, secret: 'mg_k7Hq2Lr9Xv3Mn5Pw8_Zb8yT1qN4sW6xE0rU3iO5pA7' },
  OAuthClient: {
    client_id: 'dyn_Qm3Xr8Tz1Lp5Vn9K',
    client_name: 'Claude Code',
    grants: [
      {
        id: 'gr_Ys4Wk7Pq2Lm9Xb3R',
        user_id: USER,
        scope: 'openid offline_access',
        resources: ['https://gw.example.com/brain/mcp'],
        created_at: AT,
      },
    ],
  },
  Revoked: { client_id: 'dyn_Qm3Xr8Tz1Lp5Vn9K', revoked_grants: 2 },
  ConfidentialClient: confidentialClient,
  ConfidentialClientWithSecret: { client: confidentialClient, client_secret: 'q3Zp8Rk1Lm5Xv9Tb2Nw4Ys7Hc6Jd0Fg' },
  Team: {
    id: 'team_Lk3Pq8Rz2Xm7Vb1N',
    organization_id: ORG,
    name: 'Support',
    description: 'First-line customer support',
    member_count: 4,
    brain_access: { namespaces: ['knowledge'], key_prefixes: ['support/', 'runbooks/'] },
    created_at: AT,
    updated_at: LATER,
  },
  TeamMember: { user_id: USER, added_at: AT },
  Invitation: {
    id: 'inv_Rt5Yw2Qp9Lk4Xm8B',
    organization_id: ORG,
    email: 'dana@example.com',
    role: 'member',
    team_ids: ['team_Lk3Pq8Rz2Xm7Vb1N'],
    email_delivery: 'sent',
    state: 'pending',
    invited_by: USER,
    created_at: AT,
    expires_at: LATER,
    accepted_by: null,
    accepted_at: null,
  },
  AuditEvent: {
    id: 'evt_01HW3K5Q2R8T9V1X3Z5B7D9F1H',
    actor: { kind: 'user', id: USER },
    action: 'createApiKey',
    target: `/organizations/${ORG}/api-keys`,
    status: 201,
    outcome: 'success',
    ip: '203.0.113.7',
    user_agent: 'curl/8.5.0',
    request_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    details: {},
    created_at: AT,
  },
  User: {
    id: USER,
    email: 'ada@example.com',
    email_verified: true,
    name: 'Ada Lovelace',
    has_password: true,
    created_at: AT,
    updated_at: LATER,
  },
  UserMembership: {
    organization_id: ORG,
    organization_name: 'Acme',
    organization_slug: 'acme',
    role: 'owner',
    current: true,
    joined_at: AT,
  },
  DeletedUser: {
    id: USER,
    organizations_left: [ORG],
    team_memberships_removed: 1,
    social_identities_removed: 0,
    grants_revoked: 2,
    sessions_ended: 1,
  },
  Memory: memory,
  MemoryWrite: { memory, outcome: 'updated', contradictions: [CONTRADICTION_ID] },
  MemorySearch: { results: [{ memory, score: 0.83, warning: null }], searched_memories: 1240 },
  MemoryFeedbackResult: { updated: [{ namespace: 'knowledge', key: 'services/checkout', worked: 4, failed: 0 }], missing: [] },
  Contradiction: {
    id: CONTRADICTION_ID,
    kind: 'contradiction',
    status: 'resolved',
    text: 'One memory says Checkout calls the Payments API synchronously; the other that Checkout queues payments while the Payments API is down.',
    memories: ['knowledge/services/checkout', 'knowledge/runbooks/payments-outage'],
    entities: [],
    resolution: RESOLUTION,
    created_at: LATER,
  },
  OpenQuestion: {
    id: 'q_o5xajvd4xvyu2omel2ez',
    kind: 'question',
    status: 'open',
    text: 'Which team owns the Ledger?',
    memories: ['knowledge/services/checkout'],
    entities: ['Ledger'],
    resolution: '',
    created_at: LATER,
  },
  Entity: paymentsApi,
  EntityDetail: { ...paymentsApi, outgoing: [storesDataIn], incoming: [dependsOn], outgoing_total: 1, incoming_total: 1 },
  EntityMatches: { matches: [{ entity: paymentsApi, matched: 'Payments API', score: 0.8 }] },
  MergedEntity: { entity: paymentsApi, moved_relationships: 1 },
  Relationship: dependsOn,
  EntityPaths: {
    from: checkout,
    to: ledger,
    paths: [
      {
        entity_ids: ['checkout', 'payments-api', 'ledger'],
        steps: [
          { relationship: dependsOn, reversed: false },
          { relationship: storesDataIn, reversed: false },
        ],
      },
    ],
    truncated: false,
  },
  AffectedEntities: {
    root: paymentsApi,
    direction: 'impact',
    predicates: ['depends_on', 'calls', 'runs_on', 'deployed_to', 'stores_data_in', 'part_of'],
    affected: [{ entity: checkout, depth: 1, path: [{ relationship: dependsOn, reversed: true }] }],
    truncated: false,
  },
  UpdateUser: { name: 'Ada King' },
  DeleteUser: { confirm: 'ada@example.com' },
  CreateOrganization: { name: 'Acme Research', slug: 'acme-research' },
  UpdateOrganization: { name: 'Acme', settings: { audit_retention_days: 730 } },
  TransferOwnership: { user_id: USER },
  UpdateMember: { role: 'admin' },
  CreateTeam: { name: 'Support', description: 'First-line customer support' },
  UpdateTeam: { description: 'Customer support, all tiers' },
  SetBrainAccess: { namespaces: ['knowledge'], key_prefixes: ['support/', 'runbooks/'] },
  CreateInvitation: { email: 'dana@example.com', role: 'member', team_ids: ['team_Lk3Pq8Rz2Xm7Vb1N'] },
  CreateApiKey: { name: 'CI pipeline', scopes: ['memories'] },
  CreateConfidentialClient: { name: 'Nightly sync' },
  ChangePlan: { plan: 'professional', interval: 'year' },
  CreateCheckout: {
    plan: 'professional',
    interval: 'month',
    billing_address: { country: 'NL' },
    success_url: 'https://app.example.com/billing/done',
    cancel_url: 'https://app.example.com/billing',
  },
  ...REGISTRY_EXAMPLES,
  CreateMemory: { namespace: 'knowledge', key: 'services/checkout', ...memoryFields },
  UpdateMemory: { ...memoryFields, expected_version: 1 },
  MemoryFeedback: {
    outcome: 'worked',
    memories: [{ namespace: 'knowledge', key: 'services/checkout' }],
    note: 'Traced a failed order with it.',
  },
  ResolveItem: { status: 'resolved', resolution: RESOLUTION },
  UpdateEntity: { aliases: ['PGW', 'Payments'], description: 'Takes the card payment of every order.' },
  MergeEntities: { source_entity_id: 'payments' },
  AssertRelationship: {
    subject: 'Checkout',
    predicate: 'depends_on',
    object: 'Payments API',
    memory: { namespace: 'knowledge', key: 'services/checkout' },
  },
  Thread: thread,
  ThreadMessage: threadMessage,
  CreateThread: { title: 'Checkout latency above 2 s since 09:40', message: 'What changed around 09:35?' },
  UpdateThread: { status: 'resolved' },
  PostThreadMessage: { content: 'The deploy at 09:35 changed the payment client timeout.' },
  Run: run,
  RunStep: runStep,
  CreateRun: { executor: 'llm', instructions: 'Find the cause and propose a fix.', timeout_seconds: 900 },
  CancelRun: { reason: 'resolved by hand' },
  ClaimRun: { agent_id: 'oncall-bot@host-7', lease_seconds: 120 },
  ClaimedRun: {
    run: {
      ...run,
      status: 'running',
      executor: 'external',
      agent_id: 'oncall-bot@host-7',
      lease_expires_at: LATER,
      output: '',
      step_count: 0,
      finished_at: null,
    },
    lease_id: LEASE,
    steps: [],
    messages: [threadMessage],
  },
  RunHeartbeat: { lease_id: LEASE, lease_seconds: 120 },
  ReportRunStep: { lease_id: LEASE, kind: 'tool_call', name: 'grafana/query', ok: true, arguments: { q: 'p99' }, result: { value: 2.3 } },
  CompleteRun: { lease_id: LEASE, status: 'succeeded', output: 'The 09:35 deploy lowered the timeout.' },
};

/**
 * The example of a schema titled `title`; a list envelope ("TeamList", holding `teams`) gets its
 * item's example as its one item.
 */
export function exampleFor(title: string | undefined, schema: { properties?: Record<string, unknown> }): unknown {
  if (!title) return undefined;
  if (title in EXAMPLES) return EXAMPLES[title];
  const item = EXAMPLES[title.replace(/List$/, '')];
  const field = Object.keys(schema.properties ?? {}).find((name) => name !== 'next_page_token');
  if (!title.endsWith('List') || item === undefined || !field) return undefined;
  return { [field]: [item], next_page_token: null };
}
