// The REST shapes of scheduled jobs and their executions, and their translation from the agents
// service's messages (jobs.proto). A job's target is an object with a `type`: `run`, `playbook` or
// `seeding`.
import { create, type JsonObject } from '@bufbuild/protobuf';
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import {
  ExecutionTrigger,
  JobTargetSchema,
  MissedPolicy,
  type Job,
  type JobExecution,
  type JobTarget,
} from '../../gen/mindgate/agents/v1/jobs_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
import { PlaybookId } from './playbook-json.ts';
import { iso, OrganizationId } from './rest-route.ts';
import { runJson, RunSchema } from './runs.ts';

export const JobId = z
  .string()
  .regex(/^job_[A-Za-z0-9]{1,60}$/, { error: 'must be a job id (job_...)' })
  .meta({ description: 'Job id.', example: 'job_Hs8Kq2Lm9Xv4Tn1Pz7Wc' });
export const jobParams = z.object({ organization_id: OrganizationId, job_id: JobId });

export const MISSED_POLICIES = { skip: MissedPolicy.SKIP, run_once: MissedPolicy.RUN_ONCE } as const;
const MissedPolicyName = z
  .enum(['skip', 'run_once'], { error: 'must be skip or run_once' })
  .meta({ description: 'What to do with occurrences no replica fired in time: `skip` them, or `run_once` for all of them.' });
export const EXECUTORS = { llm: Executor.LLM, external: Executor.EXTERNAL } as const;
const OUTCOMES = ['pending', 'succeeded', 'failed', 'skipped'] as const;

const Timeout = z
  .int({ error: 'must be an integer' })
  .min(1, { error: 'must be at least 1' })
  .max(86_400, { error: 'must be at most 86400' })
  .optional();

const RunTargetSchema = z
  .object({
    type: z.literal('run', { error: 'must be run' }).meta({ description: 'Start a run on a new thread.' }),
    title_template: z.string().trim().min(1, { error: 'must not be empty' }).max(200, { error: 'must be at most 200 characters' }).meta({
      description: "The thread's title; `{occurrence}` becomes the occurrence's local time.",
      example: 'Nightly check {occurrence}',
    }),
    message: z
      .string()
      .max(100_000, { error: 'must be at most 100000 characters' })
      .optional()
      .meta({ description: "The thread's first message." }),
    instructions: z
      .string()
      .max(20_000, { error: 'must be at most 20000 characters' })
      .optional()
      .meta({ description: "The run's system prompt." }),
    executor: z
      .enum(['llm', 'external'], { error: 'must be llm or external' })
      .optional()
      .meta({ description: '`llm` (the default) or `external`.' }),
    timeout_seconds: Timeout,
  })
  .strict()
  .meta({ title: 'RunJobTarget' });

const PlaybookTargetSchema = z
  .object({
    type: z.literal('playbook', { error: 'must be playbook' }).meta({ description: 'Start a run of a playbook on a new thread.' }),
    playbook_id: PlaybookId,
    version: z
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .nullable()
      .optional()
      .meta({ description: 'A version to pin; null or absent: the version published when the occurrence fires.' }),
    inputs: z.record(z.string(), z.unknown()).optional().meta({ description: "Values of the playbook's declared inputs." }),
    title_template: z
      .string()
      .trim()
      .max(200, { error: 'must be at most 200 characters' })
      .optional()
      .meta({ description: "The thread's title (`{occurrence}` replaced); absent: the playbook's name and the occurrence." }),
    executor: z.enum(['llm', 'external'], { error: 'must be llm or external' }).optional().meta({
      description: 'For a version without steps: `llm` (the default) or `external`. A version with steps goes to the built-in runner.',
    }),
    timeout_seconds: Timeout,
    brain_feedback: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict()
  .meta({ title: 'PlaybookJobTarget' });

const SeedingTargetSchema = z
  .object({
    type: z.literal('seeding', { error: 'must be seeding' }).meta({ description: 'Start a seeding run of the Brain from a web page.' }),
    url: z.string().max(2_000, { error: 'must be at most 2000 characters' }).meta({
      description: 'The http(s) page, fetched as the seeding API fetches a URL source (SEEDING_URL_HOSTS).',
      example: 'https://docs.example.com/runbooks/checkout',
    }),
    namespace: z.enum(['knowledge', 'episodes'], { error: 'must be knowledge or episodes' }).optional(),
    key_prefix: z
      .string()
      .regex(/^[A-Za-z0-9._:/-]{0,100}$/, { error: 'must be at most 100 characters of [A-Za-z0-9._:/-]' })
      .optional()
      .meta({ description: 'Prepended to every derived key.' }),
    tags: z.array(z.string().min(1).max(64)).max(8).optional().meta({ description: "Added to every memory's tags." }),
  })
  .strict()
  .meta({ title: 'SeedingJobTarget' });

const JobTargetBody = z
  .discriminatedUnion('type', [RunTargetSchema, PlaybookTargetSchema, SeedingTargetSchema], {
    error: 'must be a target of type run, playbook or seeding',
  })
  .meta({ title: 'JobTarget' });

const JobFields = {
  name: z.string().trim().min(1, { error: 'must not be empty' }).max(200, { error: 'must be at most 200 characters' }),
  schedule: z
    .string()
    .max(200, { error: 'must be at most 200 characters' })
    .meta({ description: 'A cron expression: 5 fields, or 6 with seconds first.', example: '30 2 * * *' }),
  time_zone: z
    .string()
    .max(100, { error: 'must be at most 100 characters' })
    .meta({ description: 'An IANA time zone; empty or absent for UTC.', example: 'Europe/Berlin' }),
  missed_policy: MissedPolicyName,
  target: JobTargetBody,
};

export const CreateJobSchema = z
  .object({
    ...JobFields,
    time_zone: JobFields.time_zone.optional(),
    missed_policy: JobFields.missed_policy.optional(),
    enabled: z.boolean({ error: 'must be true or false' }).optional().meta({ description: 'False creates it paused.' }),
  })
  .strict()
  .meta({ title: 'CreateJob' });

export const UpdateJobSchema = z
  .object({
    name: JobFields.name.optional(),
    schedule: JobFields.schedule.optional(),
    time_zone: JobFields.time_zone.optional(),
    missed_policy: JobFields.missed_policy.optional(),
    target: JobFields.target.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { error: 'give at least one field to change' })
  .meta({ title: 'UpdateJob', minProperties: 1 });

export type TargetBody = z.output<typeof JobTargetBody>;

/** The service's target from the body's. */
export function targetOf(t: TargetBody): JobTarget {
  switch (t.type) {
    case 'run':
      return create(JobTargetSchema, {
        kind: {
          case: 'run',
          value: {
            titleTemplate: t.title_template,
            message: t.message ?? '',
            instructions: t.instructions ?? '',
            executor: EXECUTORS[t.executor ?? 'llm'],
            timeoutSeconds: t.timeout_seconds ?? 0,
          },
        },
      });
    case 'playbook':
      return create(JobTargetSchema, {
        kind: {
          case: 'playbook',
          value: {
            playbookId: t.playbook_id,
            version: t.version ?? 0,
            inputs: (t.inputs ?? {}) as JsonObject,
            titleTemplate: t.title_template ?? '',
            executor: t.executor ? EXECUTORS[t.executor] : Executor.UNSPECIFIED,
            timeoutSeconds: t.timeout_seconds ?? 0,
            brainFeedback: t.brain_feedback ?? false,
          },
        },
      });
    case 'seeding':
      return create(JobTargetSchema, {
        kind: { case: 'seeding', value: { url: t.url, namespace: t.namespace ?? '', keyPrefix: t.key_prefix ?? '', tags: t.tags ?? [] } },
      });
  }
}

/** A service field's place (`body.target.playbook.inputs.team`) in the body (`body.target.inputs.team`): its target is flat. */
export function targetLoc(loc: (string | number)[]): (string | number)[] {
  return loc[1] === 'target' && ['run', 'playbook', 'seeding'].includes(String(loc[2])) ? [...loc.slice(0, 2), ...loc.slice(3)] : loc;
}

export const ExecutionSchema = z
  .object({
    id: z.string(),
    job_id: z.string(),
    trigger: z.enum(['schedule', 'manual']),
    outcome: z.enum(OUTCOMES),
    occurrence_at: z
      .string()
      .nullable()
      .meta({ description: 'The occurrence (the latest missed one for a catch-up; the time of a manual trigger).' }),
    fired_at: z.string().nullable(),
    occurrences: z.int().meta({ description: 'How many occurrences it stands for (more than 1 for a catch-up or skipped ones).' }),
    error: z.string().meta({ description: 'Why it failed or was skipped.' }),
    thread_id: z.string().nullable(),
    run_id: z.string().nullable(),
    seeding_run_id: z.string().nullable().meta({ description: 'The seeding run it started (seeding targets).' }),
    run: RunSchema.nullable().meta({ description: 'The run it started, as it stands now (in lists of executions).' }),
  })
  .meta({ title: 'JobExecution' });

export const JobSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    schedule: z.string(),
    time_zone: z.string(),
    enabled: z.boolean().meta({ description: 'False while paused.' }),
    missed_policy: z.enum(['skip', 'run_once']),
    target: JobTargetBody,
    state: z.object({
      next_fire_at: z.string().nullable().meta({ description: 'When it fires next; null while paused.' }),
      last_execution: ExecutionSchema.nullable(),
      consecutive_failures: z.int(),
      last_error: z.string().meta({ description: 'Why the latest failed execution failed; empty after a success.' }),
      backoff_skips: z.int().meta({ description: 'Occurrences skipped before the next firing because of failures.' }),
    }),
    created_by: z.string(),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ title: 'Job' });

const ts = (t: unknown) => iso(t as Timestamp | undefined);
const orNull = (s: string) => (s === '' ? null : s);

export const executionJson = (e: JobExecution) => ({
  id: e.executionId,
  job_id: e.jobId,
  trigger: e.trigger === ExecutionTrigger.MANUAL ? ('manual' as const) : ('schedule' as const),
  outcome: OUTCOMES[e.outcome - 1] ?? 'pending',
  occurrence_at: ts(e.occurrenceTime),
  fired_at: ts(e.fireTime),
  occurrences: e.occurrences,
  error: e.error,
  thread_id: orNull(e.threadId),
  run_id: orNull(e.runId),
  seeding_run_id: orNull(e.seedingRunId),
  run: e.run ? runJson(e.run) : null,
});

const executorName = (e: Executor) => (e === Executor.EXTERNAL ? ('external' as const) : ('llm' as const));

/** The body's target from the service's. */
function targetJson(t: JobTarget | undefined) {
  const kind = t?.kind;
  if (kind?.case === 'playbook') {
    const p = kind.value;
    return {
      type: 'playbook' as const,
      playbook_id: p.playbookId,
      version: p.version === 0 ? null : p.version,
      inputs: (p.inputs ?? {}) as Record<string, unknown>,
      title_template: p.titleTemplate,
      executor: executorName(p.executor),
      timeout_seconds: p.timeoutSeconds,
      brain_feedback: p.brainFeedback,
    };
  }
  if (kind?.case === 'seeding') {
    const s = kind.value;
    return {
      type: 'seeding' as const,
      url: s.url,
      namespace: s.namespace === 'episodes' ? ('episodes' as const) : ('knowledge' as const),
      key_prefix: s.keyPrefix,
      tags: s.tags,
    };
  }
  const run = kind?.case === 'run' ? kind.value : undefined;
  return {
    type: 'run' as const,
    title_template: run?.titleTemplate ?? '',
    message: run?.message ?? '',
    instructions: run?.instructions ?? '',
    executor: executorName(run?.executor ?? Executor.LLM),
    timeout_seconds: run?.timeoutSeconds ?? 3_600,
  };
}

export function jobJson(j: Job) {
  return {
    id: j.jobId,
    organization_id: j.organizationId,
    name: j.name,
    schedule: j.schedule,
    time_zone: j.timeZone,
    enabled: j.enabled,
    missed_policy: j.missedPolicy === MissedPolicy.RUN_ONCE ? ('run_once' as const) : ('skip' as const),
    target: targetJson(j.target),
    state: {
      next_fire_at: ts(j.state?.nextFireTime),
      last_execution: j.state?.lastExecution ? executionJson(j.state.lastExecution) : null,
      consecutive_failures: j.state?.consecutiveFailures ?? 0,
      last_error: j.state?.lastError ?? '',
      backoff_skips: j.state?.backoffSkips ?? 0,
    },
    created_by: j.createdBy,
    created_at: ts(j.createTime),
    updated_at: ts(j.updateTime),
  };
}
