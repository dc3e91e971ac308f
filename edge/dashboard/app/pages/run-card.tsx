// One run of an investigation: its status, who runs it, usage, output or error, and its steps;
// while it is queued or running, its events as they happen, over the API's event stream
// (`streamRunEvents`), which resumes with Last-Event-ID after a drop (event-stream.ts). Members
// cancel a run still going and retry one that finished.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { followEvents, type StreamEvent, type StreamState } from '../event-stream.ts';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, ProblemAlert, usePaged, when } from '../ui.tsx';

export interface Run {
  id: string;
  thread_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'timed_out';
  executor: 'llm' | 'external' | 'playbook';
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

export const going = (r: Run) => r.status === 'queued' || r.status === 'running';
const EXECUTORS: Record<Run['executor'], string> = {
  llm: 'the LLM runner',
  external: 'an external agent',
  playbook: 'the playbook runner',
};

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

/** An event of the stream in words. */
function eventText(e: StreamEvent): string {
  const data = JSON.parse(e.data) as { status?: string; at?: string; agent_id?: string } & Partial<Step>;
  if (e.event === 'step')
    return `step ${data.index}: ${data.kind} ${data.name}, ${data.ok ? 'ok' : `failed${data.error ? `: ${data.error}` : ''}`}`;
  return `${data.status}${data.agent_id ? ` (${data.agent_id})` : ''} at ${when(data.at)}`;
}

interface Live {
  run: Run;
  events: { id: string; text: string }[];
  state: StreamState | 'idle';
  problem?: ProblemDocument;
}

/** The run as its event stream tells it, while it is going; `finished` once it has ended. */
function useRunEvents(run: Run, base: string, finished: () => void): Live {
  const { api } = useSession();
  const [live, setLive] = useState<Live>({ run, events: [], state: 'idle' });
  useEffect(() => setLive((l) => ({ ...l, run })), [run]);
  const following = going(run);
  // The stream is opened once while the run is going; it calls the screen's latest `finished`.
  const onFinished = useRef(finished);
  onFinished.current = finished;
  useEffect(() => {
    if (!following) return;
    const stop = new AbortController();
    const heard = (e: StreamEvent, change: (r: Run) => Run) =>
      setLive((l) => ({ ...l, run: change(l.run), events: [...l.events, { id: e.id, text: eventText(e) }] }));
    void followEvents(api, `${base}/runs/${run.id}/events`, {
      signal: stop.signal,
      onEvent(e) {
        const data = JSON.parse(e.data) as { status: Run['status']; agent_id?: string; run?: Run; index?: number };
        if (e.event === 'step') {
          heard(e, (r) => ({ ...r, step_count: Math.max(r.step_count, (data.index ?? 0) + 1) }));
          return false;
        }
        heard(e, (r) => data.run ?? { ...r, status: data.status, agent_id: data.agent_id ?? r.agent_id });
        if (!data.run) return false;
        onFinished.current();
        return true;
      },
      onState: (state, problem) => setLive((l) => ({ ...l, state, problem })),
    });
    return () => stop.abort();
  }, [api, base, run.id, following]);
  return live;
}

function LiveEvents({ live }: { live: Live }) {
  if (live.events.length === 0 && live.state === 'idle') return null;
  const last = live.events.at(-1)?.id;
  return (
    <>
      <p role="status" class="meta">
        {live.state === 'live' && 'Following its events live.'}
        {live.state === 'reconnecting' && `The connection dropped: resuming after event ${last ?? 'none'}…`}
      </p>
      <ProblemAlert problem={live.state === 'done' ? live.problem : undefined} />
      <ol class="steps" aria-label={`Events of ${live.run.id}`}>
        {live.events.map((e) => (
          <li key={e.id}>{e.text}</li>
        ))}
      </ol>
    </>
  );
}

export function RunCard({
  run: listed,
  base,
  act,
  finished,
}: {
  run: Run;
  base: string;
  act: (what: () => Promise<string>) => void;
  /** Called when the run ends while the screen follows it. */
  finished: () => void;
}) {
  const { api, organization } = useSession();
  const [open, setOpen] = useState(false);
  const live = useRunEvents(listed, base, finished);
  const run = live.run;
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
        {EXECUTORS[run.executor] ?? run.executor}
        {run.agent_id && ` (${run.agent_id}, attempt ${run.attempt})`} · started {when(run.created_at)}
        {run.finished_at && ` · finished ${when(run.finished_at)}`} · {run.step_count} steps ·{' '}
        {run.usage.input_tokens + run.usage.output_tokens} tokens
        {run.retry_of && ` · retries ${run.retry_of}`}
      </p>
      {run.output && <pre class="content">{run.output}</pre>}
      {run.error && <p class="problem">{run.error}</p>}
      <LiveEvents live={live} />
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
