// Scheduled jobs: a cron schedule in a time zone that starts a run on a new thread at each
// occurrence. Everyone lists them with their state; members and above schedule one. Each opens
// on its own page (job.tsx) with its executions.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

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
  run: { id: string; status: string } | null;
}

export interface Job {
  id: string;
  name: string;
  schedule: string;
  time_zone: string;
  enabled: boolean;
  missed_policy: 'skip' | 'run_once';
  target: {
    type: 'run';
    title_template: string;
    message: string;
    instructions: string;
    executor: 'llm' | 'external';
    timeout_seconds: number;
  };
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

function ScheduleJob({ base }: { base: string }) {
  const { api, settings } = useSession();
  const { route } = useLocation();
  const [f, setF] = useState({ name: '', schedule: '', time_zone: '', title_template: '', message: '', executor: 'llm', paused: false });
  const set = (k: keyof typeof f) => (e: { currentTarget: { value: string } }) => setF({ ...f, [k]: e.currentTarget.value });
  const action = useAction(() => {});
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const target = { type: 'run', title_template: f.title_template, executor: f.executor, ...(f.message ? { message: f.message } : {}) };
      const body = { name: f.name, schedule: f.schedule, ...(f.time_zone ? { time_zone: f.time_zone } : {}), target, enabled: !f.paused };
      const { data } = await api.call<Job>('POST', base, { body, idempotencyKey: crypto.randomUUID() });
      route(`${settings.basePath}/jobs/${data.id}`);
      return `Job ${data.name} scheduled.`;
    });
  };
  return (
    <details>
      <summary>Schedule a job</summary>
      <form onSubmit={create} class="stacked-form">
        <label>
          Name
          <input required maxLength={200} value={f.name} onInput={set('name')} />
        </label>
        <label>
          Schedule (cron: minute hour day month weekday)
          <input required maxLength={200} value={f.schedule} onInput={set('schedule')} placeholder="30 2 * * *" />
        </label>
        <label>
          Time zone (IANA; empty for UTC)
          <input maxLength={100} value={f.time_zone} onInput={set('time_zone')} placeholder="Europe/Berlin" />
        </label>
        <label>
          Investigation title ({'{occurrence}'} becomes the time)
          <input required maxLength={200} value={f.title_template} onInput={set('title_template')} />
        </label>
        <label>
          First message
          <textarea rows={3} value={f.message} onInput={set('message')} />
        </label>
        <label>
          Runs it
          <select value={f.executor} onChange={set('executor')}>
            <option value="llm">the platform's LLM runner</option>
            <option value="external">an external agent</option>
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={f.paused} onChange={(e) => setF({ ...f, paused: e.currentTarget.checked })} /> Create it paused
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
