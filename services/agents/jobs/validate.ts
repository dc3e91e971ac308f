// The fields of a job a caller sets, checked as the service takes them (INVALID_ARGUMENT naming
// the field: target.run.title_template, target.playbook.inputs.service, target.seeding.url,
// schedule, time_zone...). A playbook target is checked as a run of it would be (the playbook is
// the organization's, the version exists or one is published, the inputs fit); a seeding target's
// URL against the deployment's URL-source settings, as StartSeeding checks it.
import type { JsonObject } from '@bufbuild/protobuf';
import type {
  JobTarget,
  MissedPolicy as MissedPolicyEnum,
  PlaybookTarget,
  RunTarget,
  SeedingTarget,
} from '../../../gen/mindgate/agents/v1/jobs_pb.js';
import { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import { urlRefusal } from '../../brain/seeding/fetch-source.ts';
import { KEY_PREFIX } from '../../brain/seeding/start.ts';
import { invalid, requireList, requireText } from '../../common/rpc/validate.ts';
import { planPlaybookRun, storedChoiceFields } from '../handlers/playbook-runs.ts';
import { MAX_CONTENT } from '../handlers/threads.ts';
import type { JobsContext } from './context.ts';
import { MissedPolicy, type PlaybookTargetRecord, type RunTargetRecord, type SeedingTargetRecord, type TargetRecord } from './records.ts';

export const requireName = (name: string) => requireText('name', name.trim(), 200, { required: true }).trim();

export function requireMissedPolicy(policy: MissedPolicyEnum): MissedPolicy {
  if (!(policy in MissedPolicy)) invalid('missed_policy', 'is not a missed-occurrence policy');
  return policy === MissedPolicy.UNSPECIFIED ? MissedPolicy.SKIP : policy;
}

function requireTimeout(field: string, seconds: number): number {
  if (seconds > 86_400) invalid(field, 'must be from 1 to 86400 (0 for 3600)');
  return seconds === 0 ? 3_600 : seconds;
}

function requireRunTarget(run: RunTarget): RunTargetRecord {
  const titleTemplate = requireText('target.run.title_template', run.titleTemplate.trim(), 200, { required: true }).trim();
  const executor = run.executor === Executor.UNSPECIFIED ? Executor.LLM : run.executor;
  if (!(executor in Executor)) invalid('target.run.executor', 'is not an executor');
  return {
    kind: 'run',
    titleTemplate,
    message: requireText('target.run.message', run.message, MAX_CONTENT),
    instructions: requireText('target.run.instructions', run.instructions, 20_000),
    executor,
    timeoutSeconds: requireTimeout('target.run.timeout_seconds', run.timeoutSeconds),
  };
}

async function requirePlaybookTarget(ctx: JobsContext, organizationId: string, p: PlaybookTarget): Promise<PlaybookTargetRecord> {
  if (p.playbookId === '') invalid('target.playbook.playbook_id', 'is required');
  const inputs = (p.inputs ?? {}) as JsonObject;
  if (JSON.stringify(inputs).length > 20_000) invalid('target.playbook.inputs', 'must be at most 20,000 characters as JSON');
  const choice = { organizationId, playbookId: p.playbookId, version: p.version, inputs, executor: p.executor };
  await planPlaybookRun(ctx.playbooks, choice, storedChoiceFields('target.playbook'));
  return {
    kind: 'playbook',
    playbookId: p.playbookId,
    version: p.version,
    inputs,
    titleTemplate: requireText('target.playbook.title_template', p.titleTemplate.trim(), 200).trim(),
    executor: p.executor,
    timeoutSeconds: requireTimeout('target.playbook.timeout_seconds', p.timeoutSeconds),
    brainFeedback: p.brainFeedback,
  };
}

async function requireSeedingTarget(ctx: JobsContext, s: SeedingTarget): Promise<SeedingTargetRecord> {
  if (!ctx.seeding) invalid('target.seeding', 'needs the brain service, which this agents service does not reach (BRAIN_SERVICE_ADDR)');
  let url: URL | undefined;
  try {
    url = new URL(s.url);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || s.url.length > 2_000) {
    invalid('target.seeding.url', 'must be an absolute http or https URL of at most 2000 characters');
  }
  const refused = await urlRefusal(ctx.seedingConfig, url.href);
  if (refused) invalid('target.seeding.url', refused);
  if (s.namespace !== '' && s.namespace !== 'knowledge' && s.namespace !== 'episodes') {
    invalid('target.seeding.namespace', 'must be knowledge or episodes');
  }
  if (!KEY_PREFIX.test(s.keyPrefix)) invalid('target.seeding.key_prefix', 'must be at most 100 characters of [A-Za-z0-9._:/-]');
  return {
    kind: 'seeding',
    url: s.url,
    namespace: s.namespace === 'episodes' ? 'episodes' : 'knowledge',
    keyPrefix: s.keyPrefix,
    tags: requireList('target.seeding.tags', s.tags, 8, 64),
  };
}

export async function requireTarget(ctx: JobsContext, organizationId: string, target: JobTarget | undefined): Promise<TargetRecord> {
  switch (target?.kind.case) {
    case 'run':
      return requireRunTarget(target.kind.value);
    case 'playbook':
      return requirePlaybookTarget(ctx, organizationId, target.kind.value);
    case 'seeding':
      return requireSeedingTarget(ctx, target.kind.value);
    default:
      return invalid('target', 'is required: a run, playbook or seeding target');
  }
}
