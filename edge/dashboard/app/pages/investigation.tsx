// One investigation: the alerts linked to it, its messages with their attachments (members post
// more; thread-messages.tsx), its runs with their status, usage, output and steps, each followed
// live over its event stream while it is queued or running (run-card.tsx), and the memories its
// runs wrote (investigation-links.tsx), read again when a run ends; members start a run (the
// platform's LLM runner, or an external agent that claims it), cancel one that is still going and
// retry one that finished, and resolve or reopen the thread.
import { useCallback, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, useResource, when } from '../ui.tsx';
import { LinkedAlerts, ThreadMemories } from './investigation-links.tsx';
import type { Thread } from './investigations.tsx';
import { type Run, RunCard } from './run-card.tsx';
import { Messages } from './thread-messages.tsx';

function Runs({ base, threadId, onSettled }: { base: string; threadId: string; onSettled: () => void }) {
  const { api, organization } = useSession();
  const runs = usePaged<Run>(`${base}/runs?thread_id=${threadId}&page_size=20`, 'runs');
  const action = useAction(runs.reload);
  const [executor, setExecutor] = useState<'llm' | 'external'>('llm');
  const [instructions, setInstructions] = useState('');
  // A run that ended may have written memories: the page reads them, and the runs, again.
  const finished = () => {
    runs.reload();
    onSettled();
  };
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
      <p role="status">{action.notice}</p>
      {runs.items.map((r) => (
        <RunCard key={r.id} run={r} base={base} act={(what) => void action.run(what)} finished={finished} />
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
