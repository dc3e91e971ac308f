// Schema fuzzing with schemathesis (pinned, from PyPI; scripts/install-test-tools.sh) against a
// live platform: the Agents API with a real user token and with an API key, acting on a seeded
// organization, then the gateway's and the Web API's OpenAPI documents. Every check runs: no 5xx,
// every status, content type, header and body as documented, valid requests accepted and invalid
// ones refused. A run is bounded (10 examples per operation, a fixed seed); the whole file takes
// about two minutes on 2 cores. Under CI=true a missing schemathesis fails the suite.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinAs } from '../support/members.ts';
import { obtainAccessToken, startOAuthTestPlatform, type ObtainedToken } from '../support/oauth-client.ts';
import { findTool, type TestPlatform } from '../support/platform.ts';
import { restClient } from '../support/rest.ts';

const st = findTool('st', []);
const hooks = path.resolve(import.meta.dirname, '../fuzz/schemathesis_hooks.py');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-fuzz-'));
let platform: TestPlatform;
let owner: ObtainedToken;
let apiKey: string;

/**
 * Operations that would cut off the fuzzer's own credential (revoking its OAuth client or grant,
 * deleting its organization or its account) are left out of the runs on its organization; their
 * tests are in test/integration.
 */
const SELF_DESTRUCTIVE = ['revokeOAuthClient', 'revokeOAuthGrant', 'deleteOrganization', 'deleteCurrentUser'];

/** Changing one's password or e-mail address needs the current password, a secret no schema can hold. */
const SECRET_BOUND = `
[[operations]]
include-operation-id = "updateCurrentUser"
checks.positive_data_acceptance.enabled = false

[[operations]]
include-operation-id = "requestEmailChange"
checks.positive_data_acceptance.enabled = false
`;

/**
 * Whether a URL is accepted depends on where its host resolves (private addresses are refused:
 * a webhook endpoint's by the outbound policy, test/integration/webhook-outbound.test.ts; an MCP
 * server's, docs/gateway.md, "Private addresses"; a seeding URL source's by the deployment's
 * allowed hosts, docs/brain.md, "Seeding"), and an install's required inputs on the catalog
 * entry named in the path: no schema can state either. Every other check runs on them, and
 * test/integration/api-registry-fuzz.test.ts fuzzes the registry's operations from valid bodies.
 */
const ADDRESS_BOUND = [
  'createWebhookEndpoint',
  'updateWebhookEndpoint',
  'createMcpServer',
  'updateMcpServer',
  'installIntegration',
  // A seeding URL source: whether URL sources are on (SEEDING_URL_HOSTS) and the host allowed.
  'createSeedingRun',
]
  .map((id) => `\n[[operations]]\ninclude-operation-id = "${id}"\nchecks.positive_data_acceptance.enabled = false\n`)
  .join('');

/**
 * Refusals that depend on what is stored, which no schema can state; each is a documented response
 * of its operation. Only that status is added to what a schema-valid request may get (the
 * default: 2XX, 401, 403, 404), for that operation only.
 */
const STATE_BOUND = `
# A memory's key is taken (create), or it is at another version than the one given (update, delete).
[[operations]]
include-operation-id = "deleteMemory"
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "412"]

# Writes also refuse a memory saying what another one already says (409, unless allow_duplicate).
[[operations]]
include-operation-id = ["createMemory", "updateMemory"]
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "409", "412"]

# A playbook document's steps are checked against the playbook JSON Schema (published apart, at
# /schemas/playbook.json) and must name declared tools, namespaces, inputs and earlier steps; a
# version to publish must exist; a run's inputs must be the published version's; a name is unique.
[[operations]]
include-operation-id = ["createPlaybook", "updatePlaybook", "importPlaybook", "publishPlaybook", "runPlaybook"]
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "409", "412", "422"]

# The cited memory must exist in the organization; the merge's source must be another entity than
# the one in the path (a path and a body field no schema can relate).
[[operations]]
include-operation-id = ["assertRelationship", "mergeEntities"]
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "422"]

# A case's answer_pattern must be a pattern RE2 takes, and a case needs an expectation (a 422
# naming the field, test/integration/api-evaluation.test.ts); a dataset holds 10,000 cases at most.
[[operations]]
include-operation-id = "addEvaluationCase"
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "409", "422"]

# An evaluation of a dataset without cases (409 dataset-empty); a comparison of one not finished.
[[operations]]
include-operation-id = ["createEvaluation", "compareEvaluations"]
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "409"]

# A job's cron expression and time zone are valid as croner and the time-zone database read them
# (a 422 naming schedule or time_zone, test/integration/api-jobs.test.ts).
[[operations]]
include-operation-id = ["createJob", "updateJob"]
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "422"]

# An alert rule's regular expressions must compile (JavaScript's syntax, which no schema states);
# a snooze ends in the future, at most 30 days ahead of the platform's clock, on an alert event not
# yet resolved (409).
[[operations]]
include-operation-id = ["createAlertRule", "updateAlertRule"]
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "422"]

[[operations]]
include-operation-id = "snoozeAlertEvent"
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "409", "422"]
`;

/** The OAuth facade's validity depends on state no schema states (registered clients, tickets, policy). */
const STATEFUL_OAUTH = `
[[operations]]
include-path-regex = "^/(authorize|token|register)$"
checks.positive_data_acceptance.enabled = false
`;

/** A Brain pass is bought by paying: without a payment credential the documented answer is 402. */
const PAYMENT_BOUND = `
[[operations]]
include-operation-id = "buyBrainPass"
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "402"]

# A deprecated operation answers 410 from its sunset date on (documented): a suite run on a later
# date, or under faketime, gets it.
[[operations]]
include-operation-id = "getStatusDeprecated"
checks.positive_data_acceptance.expected-statuses = ["2XX", "401", "403", "404", "410"]
`;

function toml(headers: Record<string, string>, organizationId?: string, extra = ''): string {
  // Every check, set here rather than on the command line, which would override the per-operation
  // settings below.
  const lines = [`hooks = ${JSON.stringify(hooks)}`, 'seed = 20261124', 'checks.enabled = true'];
  const entries = Object.entries(headers).map(([k, v]) => `${JSON.stringify(k)} = ${JSON.stringify(v)}`);
  lines.push(`headers = { ${entries.join(', ')} }`);
  if (organizationId) lines.push('[parameters]', `"path.organization_id" = ${JSON.stringify(organizationId)}`);
  return `${lines.join('\n')}\n${extra}`;
}

/** Runs schemathesis (asynchronously: the platform under test runs in this process). */
function fuzz(name: string, config: string, schemaUrl: string, args: string[] = []): Promise<{ code: number | null; output: string }> {
  const file = path.join(dir, `${name}.toml`);
  fs.writeFileSync(file, config);
  const argv = ['--config-file', file, 'run', schemaUrl, '--max-examples', '10', '--workers', '2'];
  argv.push('--phases', 'examples,fuzzing', '--no-color', '--report-dir', path.join(dir, name), ...args);
  return new Promise((resolve, reject) => {
    const child = spawn(st!, argv, { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

const summary = (output: string) => output.slice(Math.max(0, output.indexOf('=== FAILURES') - 1)).slice(0, 12_000) || output.slice(-4_000);

beforeAll(async () => {
  if (!st) return;
  platform = await startOAuthTestPlatform({ API_RATE_LIMIT_STARTER: '1000000', API_RATE_LIMIT_PROFESSIONAL: '1000000' });
  const api = platform.ctx.config.publicUrls.api;
  const call = restClient(() => api);
  owner = await obtainAccessToken(platform, { resource: api });
  const org = owner.organizationId;
  // A seeded organization, so that the fuzzer's calls reach real teams, members and invitations.
  const member = await joinAs(platform, org, 'member');
  const team = await call(`/organizations/${org}/teams`, { token: owner.access_token, body: { name: 'Seeded' } });
  await call(`/organizations/${org}/teams/${team.json.id}/members/${member.userId}`, { token: owner.access_token, method: 'PUT' });
  await call(`/organizations/${org}/invitations`, { token: owner.access_token, body: { email: 'seed@example.com', role: 'viewer' } });
  await call(`/organizations/${org}/confidential-clients`, { token: owner.access_token, body: { name: 'seeded' } });
  const key = await call(`/organizations/${org}/api-keys`, { token: owner.access_token, body: { name: 'fuzz', scopes: ['admin'] } });
  apiKey = key.json.secret;
}, 120_000);

afterAll(async () => {
  await platform?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!st)('schema fuzzing (schemathesis)', () => {
  const exclude = SELF_DESTRUCTIVE.flatMap((id) => ['--exclude-operation-id', id]);

  it('finds nothing wrong in the Agents API with an API key', async () => {
    const api = platform.ctx.config.publicUrls.api;
    const config = toml({ 'x-api-key': apiKey }, owner.organizationId, SECRET_BOUND + ADDRESS_BOUND + STATE_BOUND);
    const { code, output } = await fuzz('api-key', config, `${api}/openapi.json`, exclude);
    expect(code, summary(output)).toBe(0);
  }, 300_000);

  it('finds nothing wrong in the Agents API with a user access token', async () => {
    const api = platform.ctx.config.publicUrls.api;
    const headers = { Authorization: `Bearer ${owner.access_token}` };
    const { code, output } = await fuzz(
      'api-token',
      toml(headers, owner.organizationId, SECRET_BOUND + ADDRESS_BOUND + STATE_BOUND),
      `${api}/openapi.json`,
      exclude,
    );
    expect(code, summary(output)).toBe(0);
  }, 300_000);

  it("finds nothing wrong in the gateway's OpenAPI document", async () => {
    const gateway = platform.ctx.config.publicUrls.gateway;
    const { code, output } = await fuzz('gateway', toml({}, undefined, STATEFUL_OAUTH), `${gateway}/openapi.json`);
    expect(code, summary(output)).toBe(0);
  }, 300_000);

  it("finds nothing wrong in the Web API's OpenAPI document", async () => {
    const web = platform.ctx.config.publicUrls.web;
    const { code, output } = await fuzz('web', toml({}, undefined, PAYMENT_BOUND), `${web}/openapi.json`);
    expect(code, summary(output)).toBe(0);
  }, 300_000);
});
