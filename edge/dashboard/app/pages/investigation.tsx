// One investigation: the alerts linked to it, its messages with their attachments (members post
// more; thread-messages.tsx), its runs with their status, usage, output and steps, kept live while
// a run is queued or running (read again every two seconds), and the memories its runs wrote
// (investigation-links.tsx); members start a run (the platform's LLM runner, or an external agent
// that claims it), cancel one that is still going and retry one that finished, and resolve or
// reopen the thread.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource, when } from '../ui.tsx';
import { LinkedAlerts, ThreadMemories } from './investigation-links.tsx';
import type { Thread } from './investigations.tsx';
import { Messages } from './thread-messages.tsx';

interface Run {
  id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';
  executor: 'llm' | 'external';
  agent_id: string;
  attempt: number;
  usage: { input_tokens: number; output_tokens: number; tool_calls: number; duration_ms: number };
  output: string;
  error: string;
  step_count: number;
  retry_of: string | null;
  created_at: string | null;
  finished_at: string | null;
}

interface Step {
  index: number;
  kind: string;
  name: string;
  ok: boolean;
  error: string;
  started_at: string | null;
}

const LIVE_MS = 2_000;
const going = (r: Run) => r.status === 'queued' || r.status === 'running';

function Steps({ path }: { path: string }) {
  const steps = usePaged<Step>(path, 'steps');
  return (
    <>
      <ProblemAlert problem={steps.problem} />
      <ol class="steps">
        {steps.items.map((s) => (
          <li key={s.index}>
            <code>{s.kind}</code> {s.name}: {s.ok ? 'ok' : `failed${s.error ? `: ${s.error}` : ''}`} ({when(s.started_at)})
          </li>
        ))}
      </ol>
      {!steps.loading && steps.items.length === 0 && <p>No steps yet.</p>}
      <MoreButton paged={steps} label="More steps" />
    </>
  );
}

function RunCard({ run, base, act }: { run: Run; base: string; act: (what: () => Promise<string>) => void }) {
  const { api, organization } = useSession();
  const [open, setOpen] = useState(false);
  const mayWork = can(organization.role, 'cancelRun');
  const cancel = () => {
    if (!confirmed('Cancel this run?')) return;
    act(async () => {
      await api.call('POST', `${base}/runs/${run.id}/cancel`, { body: { reason: 'cancelled from the dashboard' } });
      return 'Run cancelled.';
    });
  };
  const retry = () =>
    act(async () => {
      await api.call('POST', `${base}/runs/${run.id}/retry`, { idempotencyKey: crypto.randomUUID() });
      return 'Run retried.';
    });
  return (
    <article class="run" aria-label={`Run ${run.id}`}>
      <h3>
        Run <code>{run.id}</code>: <span class="run-status">{run.status}</span>
      </h3>
      <p class="meta">
        {run.executor === 'llm' ? 'the LLM runner' : 'an external agent'}
        {run.agent_id && ` (${run.agent_id}, attempt ${run.attempt})`} · started {when(run.created_at)}
        {run.finished_at && ` · finished ${when(run.finished_at)}`} · {run.step_count} steps ·{' '}
        {run.usage.input_tokens + run.usage.output_tokens} tokens
        {run.retry_of && ` · retries ${run.retry_of}`}
      </p>
      {run.output && <pre class="content">{run.output}</pre>}
      {run.error && <p class="problem">{run.error}</p>}
      <p>
        <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          Steps of {run.id}
        </button>{' '}
        {mayWork && going(run) && (
          <button type="button" class="danger" onClick={cancel}>
            Cancel {run.id}
          </button>
        )}
        {mayWork && !going(run) && (
          <button type="button" onClick={retry}>
            Retry {run.id}
          </button>
        )}
      </p>
      {open && <Steps key={run.step_count} path={`${base}/runs/${run.id}/steps`} />}
    </article>
  );
}

function Runs({ base, threadId, onSettled }: { base: string; threadId: string; onSettled: () => void }) {
  const { api, organization } = useSession();
  const runs = usePaged<Run>(`${base}/runs?thread_id=${threadId}&page_size=20`, 'runs');
  const action = useAction(runs.reload);
  const [executor, setExecutor] = useState<'llm' | 'external'>('llm');
  const [instructions, setInstructions] = useState('');
  const live = runs.items.some(going);
  const wasLive = useRef(false);
  useEffect(() => {
    // A run that ended may have written memories: the page reads them again.
    if (wasLive.current && !live) onSettled();
    wasLive.current = live;
    if (!live) return;
    const timer = setInterval(runs.reload, LIVE_MS);
    return () => clearInterval(timer);
  }, [live, runs.reload, onSettled]);
  const start = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { executor, ...(instructions ? { instructions } : {}) };
      await api.call('POST', `${base}/threads/${threadId}/runs`, { body, idempotencyKey: crypto.randomUUID() });
      return 'Run started.';
    });
  };
  return (
    <section aria-labelledby="runs-title">
      <h2 id="runs-title">Runs</h2>
      {can(organization.role, 'createRun') && (
        <form onSubmit={start} class="inline-form">
          <label>
            Executor
            <select value={executor} onChange={(e) => setExecutor(e.currentTarget.value as 'llm' | 'external')}>
              <option value="llm">the platform's LLM runner</option>
              <option value="external">an external agent</option>
            </select>
          </label>
          <label>
            Instructions (optional)
            <input maxLength={20000} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Start a run
          </button>
        </form>
      )}
      <ProblemAlert problem={runs.problem ?? action.problem} />
      <p role="status">
        {action.notice} {live ? 'Following the runs still going…' : ''}
      </p>
      {runs.items.map((r) => (
        <RunCard key={r.id} run={r} base={base} act={(what) => void action.run(what)} />
      ))}
      {!runs.loading && runs.items.length === 0 && !runs.problem && <p>No runs yet.</p>}
      <MoreButton paged={runs} label="Older runs" />
    </section>
  );
}

export function InvestigationPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const base = `/organizations/${organization.organization_id}`;
  const path = `${base}/threads/${params.id}`;
  const [version, setVersion] = useState(0);
  const { data: thread, problem } = useResource<Thread>(path, version);
  const reread = useCallback(() => setVersion((v) => v + 1), []);
  const action = useAction(reread);
  const setStatus = (status: Thread['status']) =>
    void action.run(async () => {
      await api.call('PATCH', path, { body: { status } });
      return `Investigation ${status === 'open' ? 'reopened' : status}.`;
    });
  return (
    <Page title={thread ? thread.title : 'Investigation'}>
      <p>
        <a href={`${settings.basePath}/investigations`}>All investigations</a>
      </p>
      <ProblemAlert problem={problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {thread && (
        <>
          <p>
            Status: <strong>{thread.status}</strong> · opened {when(thread.created_at)}{' '}
            {can(organization.role, 'updateThread') && (
              <button type="button" onClick={() => setStatus(thread.status === 'open' ? 'resolved' : 'open')}>
                {thread.status === 'open' ? 'Mark resolved' : 'Reopen'}
              </button>
            )}
          </p>
          <LinkedAlerts base={base} threadId={thread.id} />
          <Messages path={path} after={() => setVersion((v) => v + 1)} />
          <Runs base={base} threadId={thread.id} onSettled={reread} />
          <ThreadMemories path={path} version={version} />
        </>
      )}
    </Page>
  );
}
