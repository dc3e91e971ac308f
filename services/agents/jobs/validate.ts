// The fields of a job a caller sets, checked as the service takes them (INVALID_ARGUMENT naming
// the field: target.run.title_template, schedule, time_zone...).
import { Executor } from '../../../gen/mindgate/agents/v1/runs_pb.js';
import type { JobTarget, MissedPolicy as MissedPolicyEnum } from '../../../gen/mindgate/agents/v1/jobs_pb.js';
import { invalid, requireText } from '../../common/rpc/validate.ts';
import { MAX_CONTENT } from '../handlers/threads.ts';
import { MissedPolicy, type RunTargetRecord } from './records.ts';

export const requireName = (name: string) => requireText('name', name.trim(), 200, { required: true }).trim();

export function requireMissedPolicy(policy: MissedPolicyEnum): MissedPolicy {
  if (!(policy in MissedPolicy)) invalid('missed_policy', 'is not a missed-occurrence policy');
  return policy === MissedPolicy.UNSPECIFIED ? MissedPolicy.SKIP : policy;
}

export function requireTarget(target: JobTarget | undefined): RunTargetRecord {
  if (target?.kind.case !== 'run') invalid('target', 'is required: a run target');
  const run = target.kind.value;
  const titleTemplate = requireText('target.run.title_template', run.titleTemplate.trim(), 200, { required: true }).trim();
  const executor = run.executor === Executor.UNSPECIFIED ? Executor.LLM : run.executor;
  if (!(executor in Executor)) invalid('target.run.executor', 'is not an executor');
  if (run.timeoutSeconds > 86_400) invalid('target.run.timeout_seconds', 'must be from 1 to 86400 (0 for 3600)');
  return {
    kind: 'run',
    titleTemplate,
    message: requireText('target.run.message', run.message, MAX_CONTENT),
    instructions: requireText('target.run.instructions', run.instructions, 20_000),
    executor,
    timeoutSeconds: run.timeoutSeconds === 0 ? 3_600 : run.timeoutSeconds,
  };
}
