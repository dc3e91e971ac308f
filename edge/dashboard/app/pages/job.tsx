// One scheduled job: its schedule, target and state; members pause and resume it, fire it now
// (one execution outside the schedule, linking to the investigation it opened), change its
// schedule (with If-Match) and delete it; and its executions, newest first, each with the run it
// started as it stands now.
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource, when } from '../ui.tsx';
import { type Execution, type Job, stateOf } from './jobs.tsx';

function Executions({ path }: { path: string }) {
  const { settings } = useSession();
  const executions = usePaged<Execution>(`${path}/executions?page_size=20`, 'executions');
  return (
    <section aria-labelledby="executions-title">
      <h2 id="executions-title">Executions</h2>
      <ProblemAlert problem={executions.problem} />
      <table>
        <caption>Executions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Fired</th>
            <th scope="col">Trigger</th>
            <th scope="col">Outcome</th>
            <th scope="col">Run</th>
          </tr>
        </thead>
        <tbody>
          {executions.items.map((x) => (
            <tr key={x.id}>
              <td>{when(x.fired_at)}</td>
              <td>
                {x.trigger}
                {x.occurrences > 1 && ` (${x.occurrences} occurrences)`}
              </td>
              <td>
                {x.outcome}
                {x.error && `: ${x.error}`}
              </td>
              <td>
                {x.thread_id ? <a href={`${settings.basePath}/investigations/${x.thread_id}`}>Investigation of {x.id}</a> : '—'}
                {x.run && ` (run ${x.run.status})`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!executions.loading && executions.items.length === 0 && !executions.problem && <p>No executions yet.</p>}
      <MoreButton paged={executions} label="Older executions" />
    </section>
  );
}

function EditSchedule({ job, save }: { job: Job; save: (patch: object) => void }) {
  const [schedule, setSchedule] = useState(job.schedule);
  const [zone, setZone] = useState(job.time_zone);
  useEffect(() => {
    setSchedule(job.schedule);
    setZone(job.time_zone);
  }, [job]);
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        save({ schedule, time_zone: zone });
      }}
    >
      <label>
        Schedule
        <input required maxLength={200} value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
      </label>
      <label>
        Time zone
        <input maxLength={100} value={zone} onInput={(e) => setZone(e.currentTarget.value)} />
      </label>
      <button type="submit">Save the schedule</button>
    </form>
  );
}

function Facts({ job }: { job: Job }) {
  return (
    <dl class="facts">
      <dt>Schedule</dt>
      <dd>
        <code>{job.schedule}</code> in {job.time_zone || 'UTC'} (missed occurrences: {job.missed_policy === 'skip' ? 'skipped' : 'run once'}
        )
      </dd>
      <dt>State</dt>
      <dd>{stateOf(job)}</dd>
      <dt>Next occurrence</dt>
      <dd>{when(job.state.next_fire_at)}</dd>
      <dt>Opens</dt>
      <dd>
        “{job.target.title_template}”, run by {job.target.executor === 'external' ? 'an external agent' : "the platform's LLM runner"}
      </dd>
      {job.state.last_error && (
        <>
          <dt>Last failure</dt>
          <dd>{job.state.last_error}</dd>
        </>
      )}
    </dl>
  );
}

export function JobPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const { route } = useLocation();
  const path = `/organizations/${organization.organization_id}/jobs/${params.id}`;
  const [version, setVersion] = useState(0);
  const { data: job, etag, problem } = useResource<Job>(path, version);
  const [thread, setThread] = useState<string | null>(null);
  const action = useAction(() => setVersion((v) => v + 1));
  const post = (verb: 'pause' | 'resume', done: string) => () =>
    void action.run(async () => {
      await api.call('POST', `${path}/${verb}`);
      return done;
    });
  const trigger = () =>
    void action.run(async () => {
      const { data } = await api.call<Execution>('POST', `${path}/trigger`, { idempotencyKey: crypto.randomUUID() });
      setThread(data.thread_id);
      return data.outcome === 'succeeded' ? 'Fired: a run is queued.' : `The execution ${data.outcome}: ${data.error}`;
    });
  const save = (patch: object) =>
    void action.run(async () => {
      await api.call('PATCH', path, { body: patch, ifMatch: etag ?? undefined });
      return 'Schedule saved.';
    });
  const remove = () => {
    if (!confirmed(`Delete the job ${job?.name}? It fires no more; the investigations it opened stay.`)) return;
    void action.run(async () => {
      await api.call('DELETE', path, { ifMatch: etag ?? undefined });
      route(`${settings.basePath}/jobs`);
      return 'Job deleted.';
    });
  };
  const mayChange = can(organization.role, 'updateJob');
  return (
    <Page title={job ? `Job ${job.name}` : 'Scheduled job'}>
      <p>
        <a href={`${settings.basePath}/jobs`}>All scheduled jobs</a>
      </p>
      <ProblemAlert problem={problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {thread && (
        <p>
          <a href={`${settings.basePath}/investigations/${thread}`}>Open the investigation it started</a>
        </p>
      )}
      {job && (
        <>
          <Facts job={job} />
          {mayChange && (
            <p class="actions">
              {job.enabled ? (
                <button type="button" onClick={post('pause', 'Job paused.')}>
                  Pause the job
                </button>
              ) : (
                <button type="button" onClick={post('resume', 'Job resumed.')}>
                  Resume the job
                </button>
              )}
              <button type="button" onClick={trigger} disabled={action.busy}>
                Fire it now
              </button>
              <button type="button" class="danger" onClick={remove}>
                Delete the job
              </button>
            </p>
          )}
          {mayChange && <EditSchedule job={job} save={save} />}
          <Executions key={version} path={path} />
        </>
      )}
    </Page>
  );
}
