// The REST shapes of scheduled jobs and their executions, and their translation from the agents
// service's messages (jobs.proto). A job's target is an object with a `type` ("run" for now), so
// playbook and seeding targets can join it as other types.
import type { Timestamp } from '@bufbuild/protobuf/wkt';
import * as z from 'zod';
import { ExecutionTrigger, MissedPolicy, type Job, type JobExecution } from '../../gen/mindgate/agents/v1/jobs_pb.js';
import { Executor } from '../../gen/mindgate/agents/v1/runs_pb.js';
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
    timeout_seconds: z
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .max(86_400, { error: 'must be at most 86400' })
      .optional(),
  })
  .strict()
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
  target: RunTargetSchema,
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

export type TargetBody = z.output<typeof RunTargetSchema>;

/** The service's target from the body's. */
export const targetOf = (t: TargetBody) => ({
  kind: {
    case: 'run' as const,
    value: {
      titleTemplate: t.title_template,
      message: t.message ?? '',
      instructions: t.instructions ?? '',
      executor: EXECUTORS[t.executor ?? 'llm'],
      timeoutSeconds: t.timeout_seconds ?? 0,
    },
  },
});

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
    target: RunTargetSchema,
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
  run: e.run ? runJson(e.run) : null,
});

export function jobJson(j: Job) {
  const run = j.target?.kind.case === 'run' ? j.target.kind.value : undefined;
  return {
    id: j.jobId,
    organization_id: j.organizationId,
    name: j.name,
    schedule: j.schedule,
    time_zone: j.timeZone,
    enabled: j.enabled,
    missed_policy: j.missedPolicy === MissedPolicy.RUN_ONCE ? ('run_once' as const) : ('skip' as const),
    target: {
      type: 'run' as const,
      title_template: run?.titleTemplate ?? '',
      message: run?.message ?? '',
      instructions: run?.instructions ?? '',
      executor: run?.executor === Executor.EXTERNAL ? ('external' as const) : ('llm' as const),
      timeout_seconds: run?.timeoutSeconds ?? 3_600,
    },
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
