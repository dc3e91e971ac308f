// Examples of the Agents API's request and response bodies, by the title of their schema, for the
// OpenAPI document (../index.ts puts each on the media types that use the schema; a list's
// example is its item's, in the list envelope): one module per area, merged here.
// test/integration/api-openapi.test.ts checks that every JSON body of every operation has one and
// that each one is valid against its schema; the schema fuzzer also sends the request examples.
import { ALERT_EXAMPLES } from './alerts.ts';
import { BILLING_EXAMPLES } from './billing.ts';
import { EVALUATION_EXAMPLES } from './evaluation.ts';
import { GRAPH_EXAMPLES } from './graph.ts';
import { INVESTIGATION_EXAMPLES } from './investigations.ts';
import { JOB_EXAMPLES } from './jobs.ts';
import { MEMORY_EXAMPLES } from './memories.ts';
import { ORGANIZATION_EXAMPLES } from './organizations.ts';
import { PLAYBOOK_EXAMPLES } from './playbooks.ts';
import { REGISTRY_EXAMPLES } from './registry.ts';
import { SEEDING_EXAMPLES } from './seeding.ts';
import { WEBHOOK_EXAMPLES } from './webhooks.ts';

export const EXAMPLES: Record<string, unknown> = {
  ...ORGANIZATION_EXAMPLES,
  ...BILLING_EXAMPLES,
  ...MEMORY_EXAMPLES,
  ...GRAPH_EXAMPLES,
  ...WEBHOOK_EXAMPLES,
  ...REGISTRY_EXAMPLES,
  ...JOB_EXAMPLES,
  ...SEEDING_EXAMPLES,
  ...PLAYBOOK_EXAMPLES,
  ...ALERT_EXAMPLES,
  ...EVALUATION_EXAMPLES,
  ...INVESTIGATION_EXAMPLES,
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
