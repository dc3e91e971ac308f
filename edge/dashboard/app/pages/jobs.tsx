// Scheduled jobs: a cron schedule in a time zone that starts something at each occurrence (a run
// on a new thread, a playbook's run, a seeding run of the Brain; job-target.tsx). Everyone lists
// them with their state; members and above schedule one. Each opens on its own page (job.tsx)
// with its executions.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';
import { type JobTarget, NEW_TARGET, type TargetDraft, TargetFields, targetBody } from './job-target.tsx';

export interface Execution {
  id: string;
  trigger: 'schedule' | 'manual';
  outcome: 'pending' | 'succeeded' | 'failed' | 'skipped';
  occurrence_at: string | null;
  fired_at: string | null;
  occurrences: number;
  error: string;
  thread_id: string | null;
  run_id: string | null;
  seeding_run_id: string | null;
  run: { id: string; status: string } | null;
}

export interface Job {
  id: string;
  name: string;
  schedule: string;
  time_zone: string;
  enabled: boolean;
  missed_policy: 'skip' | 'run_once';
  target: JobTarget;
  state: {
    next_fire_at: string | null;
    last_execution: Execution | null;
    consecutive_failures: number;
    last_error: string;
    backoff_skips: number;
  };
  created_by: string;
  created_at: string | null;
}

export function stateOf(j: Job): string {
  if (!j.enabled) return 'paused';
  return j.state.consecutive_failures > 0 ? `failing (${j.state.consecutive_failures} in a row)` : 'active';
}

/** A job's own fields (name, schedule, time zone, missed occurrences), in the create and change forms. */
export function JobFields({ f, set }: { f: JobDraft; set: (patch: Partial<JobDraft>) => void }) {
  return (
    <>
      <label>
        Name
        <input required maxLength={200} value={f.name} onInput={(e) => set({ name: e.currentTarget.value })} />
      </label>
      <label>
        Schedule (cron: minute hour day month weekday)
        <input
          required
          maxLength={200}
          value={f.schedule}
          onInput={(e) => set({ schedule: e.currentTarget.value })}
          placeholder="30 2 * * *"
        />
      </label>
      <label>
        Time zone (IANA; empty for UTC)
        <input maxLength={100} value={f.time_zone} onInput={(e) => set({ time_zone: e.currentTarget.value })} placeholder="Europe/Berlin" />
      </label>
      <label>
        Occurrences missed while no replica ran
        <select value={f.missed_policy} onChange={(e) => set({ missed_policy: e.currentTarget.value as JobDraft['missed_policy'] })}>
          <option value="skip">skip them</option>
          <option value="run_once">run once for all of them</option>
        </select>
      </label>
      <TargetFields d={f.target} set={(patch) => set({ target: { ...f.target, ...patch } })} />
    </>
  );
}

export interface JobDraft {
  name: string;
  schedule: string;
  time_zone: string;
  missed_policy: 'skip' | 'run_once';
  target: TargetDraft;
}

function ScheduleJob({ base }: { base: string }) {
  const { api, settings } = useSession();
  const { route } = useLocation();
  const [f, setF] = useState<JobDraft>({ name: '', schedule: '', time_zone: '', missed_policy: 'skip', target: NEW_TARGET });
  const [paused, setPaused] = useState(false);
  const action = useAction(() => {});
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = {
        name: f.name,
        schedule: f.schedule,
        ...(f.time_zone ? { time_zone: f.time_zone } : {}),
        missed_policy: f.missed_policy,
        target: targetBody(f.target),
        enabled: !paused,
      };
      const { data } = await api.call<Job>('POST', base, { body, idempotencyKey: crypto.randomUUID() });
      route(`${settings.basePath}/jobs/${data.id}`);
      return `Job ${data.name} scheduled.`;
    });
  };
  return (
    <details>
      <summary>Schedule a job</summary>
      <form onSubmit={create} class="stacked-form">
        <JobFields f={f} set={(patch) => setF((old) => ({ ...old, ...patch }))} />
        <label class="check">
          <input type="checkbox" checked={paused} onChange={(e) => setPaused(e.currentTarget.checked)} /> Create it paused
        </label>
        <button type="submit" disabled={action.busy}>
          Schedule the job
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function JobsPage() {
  const { settings, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/jobs`;
  const jobs = usePaged<Job>(base, 'jobs');
  return (
    <Page title="Scheduled jobs">
      <p>Each occurrence of a job's schedule opens an investigation and starts a run on it.</p>
      {can(organization.role, 'createJob') && <ScheduleJob base={base} />}
      <ProblemAlert problem={jobs.problem} />
      <table>
        <caption>Scheduled jobs of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Schedule</th>
            <th scope="col">State</th>
            <th scope="col">Next</th>
            <th scope="col">Last execution</th>
          </tr>
        </thead>
        <tbody>
          {jobs.items.map((j) => (
            <tr key={j.id}>
              <td>
                <a href={`${settings.basePath}/jobs/${j.id}`}>{j.name}</a>
              </td>
              <td>
                <code>{j.schedule}</code> {j.time_zone || 'UTC'}
              </td>
              <td>{stateOf(j)}</td>
              <td>{when(j.state.next_fire_at)}</td>
              <td>{j.state.last_execution ? `${j.state.last_execution.outcome}, ${when(j.state.last_execution.fired_at)}` : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!jobs.loading && jobs.items.length === 0 && !jobs.problem && <p>No scheduled jobs yet.</p>}
      <MoreButton paged={jobs} label="More jobs" />
    </Page>
  );
}
