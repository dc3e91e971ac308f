// One scheduled job: its schedule, target and state; members pause and resume it, fire it now
// (one execution outside the schedule, linking to the investigation it opened), change its name,
// schedule, time zone, missed-occurrence policy and target (with If-Match) and delete it; and its
// executions, newest first, each with the run (or seeding run) it started as it stands now.
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, toProblem, useAction, usePaged, useResource, when } from '../ui.tsx';
import type { ProblemDocument } from '../api.ts';
import { type JobTarget, targetBody, targetDraft } from './job-target.tsx';
import { type Execution, type Job, type JobDraft, JobFields, stateOf } from './jobs.tsx';

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
                {x.thread_id && <a href={`${settings.basePath}/investigations/${x.thread_id}`}>Investigation of {x.id}</a>}
                {x.run && ` (run ${x.run.status})`}
                {x.seeding_run_id && (
                  <>
                    seeding run <code>{x.seeding_run_id}</code>
                  </>
                )}
                {!x.thread_id && !x.seeding_run_id && '—'}
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

/** The job's name, schedule, time zone, missed-occurrence policy and target, changed at the version read. */
function ChangeJob({ job, save }: { job: Job; save: (patch: object) => Promise<void> }) {
  const draftOf = (j: Job): JobDraft => ({
    name: j.name,
    schedule: j.schedule,
    time_zone: j.time_zone,
    missed_policy: j.missed_policy,
    target: targetDraft(j.target),
  });
  const [f, setF] = useState<JobDraft>(draftOf(job));
  useEffect(() => setF(draftOf(job)), [job]);
  const [problem, setProblem] = useState<ProblemDocument>();
  const submit = (e: Event) => {
    e.preventDefault();
    setProblem(undefined);
    let target: object;
    try {
      target = targetBody(f.target);
    } catch (err) {
      setProblem(toProblem(err));
      return;
    }
    void save({ name: f.name, schedule: f.schedule, time_zone: f.time_zone, missed_policy: f.missed_policy, target });
  };
  return (
    <details>
      <summary>Change the job</summary>
      <form class="stacked-form" onSubmit={submit}>
        <JobFields f={f} set={(patch) => setF((old) => ({ ...old, ...patch }))} />
        <button type="submit">Save the job</button>
      </form>
      <ProblemAlert problem={problem} />
    </details>
  );
}

/** A playbook's name, read for the link (its id until then, or if it is gone). */
function PlaybookLink({ id }: { id: string }) {
  const { settings, organization } = useSession();
  const playbook = useResource<{ name: string }>(`/organizations/${organization.organization_id}/playbooks/${id}`);
  return <a href={`${settings.basePath}/playbooks/${id}`}>{playbook.data?.name ?? id}</a>;
}

function TargetText({ target: t }: { target: JobTarget }) {
  const who = (executor: string) => (executor === 'external' ? 'an external agent' : "the platform's LLM runner");
  if (t.type === 'seeding')
    return (
      <>
        a seeding run of the Brain's {t.namespace} from <code>{t.url}</code>
        {t.key_prefix && (
          <>
            {' '}
            (keys under <code>{t.key_prefix}</code>)
          </>
        )}
        {t.tags.length > 0 && `, tagged ${t.tags.join(', ')}`}
      </>
    );
  if (t.type === 'playbook')
    return (
      <>
        a run of the playbook <PlaybookLink id={t.playbook_id} />,{' '}
        {t.version === null ? 'the version published when it fires' : `version ${t.version}`}
        {Object.keys(t.inputs).length > 0 && (
          <>
            {' '}
            with <code>{JSON.stringify(t.inputs)}</code>
          </>
        )}
        {t.title_template && `, titled “${t.title_template}”`}
      </>
    );
  return (
    <>
      “{t.title_template}”, run by {who(t.executor)}
    </>
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
      <dt>Starts</dt>
      <dd>
        <TargetText target={job.target} />
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
    action.run(async () => {
      await api.call('PATCH', path, { body: patch, ifMatch: etag ?? undefined });
      return 'Job saved.';
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
          {mayChange && <ChangeJob job={job} save={save} />}
          <Executions key={version} path={path} />
        </>
      )}
    </Page>
  );
}
