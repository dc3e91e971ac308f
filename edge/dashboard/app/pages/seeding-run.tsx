// One seeding run: its source and options, its progress by outcome, followed live over the API's
// event stream (`streamSeedingRun`: each item as its outcome is decided, the run whenever it
// changes, resumed with Last-Event-ID after a drop), and its items (seeding-items.tsx); members
// review what it holds for review and cancel it while it goes (confirmed).
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { ProblemDocument } from '../api.ts';
import { followEvents, type StreamState } from '../event-stream.ts';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, Page, ProblemAlert, useAction, useResource, when } from '../ui.tsx';
import { type SeedingItem, SeedingItems } from './seeding-items.tsx';
import { decided, finished, type SeedingRun } from './seeding.tsx';

const OUTCOMES = [
  'stored',
  'duplicate',
  'contradiction',
  'unchanged',
  'awaiting_review',
  'approved',
  'rejected',
  'failed',
  'skipped',
  'pending',
];

interface Live {
  run?: SeedingRun;
  items: SeedingItem[];
  state: StreamState | 'idle';
  problem?: ProblemDocument;
  lastId: string;
  /** Progress events so far: the items are read again on each (one a poll of the stream at most). */
  progressed: number;
}

/** The run as its event stream tells it, from `first` on, while it has not finished. */
function useSeedingEvents(path: string, first: SeedingRun | undefined, ended: () => void): Live {
  const { api } = useSession();
  const [live, setLive] = useState<Live>({ items: [], state: 'idle', lastId: '', progressed: 0 });
  const following = first !== undefined && !finished(first);
  // The run read again (after a review, at the end) is newer than the last progress event.
  useEffect(() => setLive((l) => ({ ...l, run: undefined })), [first]);
  useEffect(() => {
    if (!following) return;
    const stop = new AbortController();
    void followEvents(api, `${path}/events`, {
      signal: stop.signal,
      onEvent(e) {
        if (e.event === 'item') {
          const item = JSON.parse(e.data) as SeedingItem;
          setLive((l) => ({ ...l, lastId: e.id, items: [...l.items, item] }));
        } else if (e.event === 'progress') {
          setLive((l) => ({ ...l, lastId: e.id, run: JSON.parse(e.data) as SeedingRun, progressed: l.progressed + 1 }));
        } else if (e.event === 'end') {
          ended();
          return true;
        }
        return false;
      },
      onState: (state, problem) => setLive((l) => ({ ...l, state, problem })),
    });
    return () => stop.abort();
  }, [api, path, following]);
  return live;
}

function Progress({ run, live }: { run: SeedingRun; live: Live }) {
  return (
    <>
      <p>
        <progress value={decided(run)} max={Math.max(1, run.progress.total)} aria-label="Items decided" /> {decided(run)} of{' '}
        {run.progress.total} item(s) decided
      </p>
      <p role="status" class="meta">
        {live.state === 'live' && 'Following its progress live.'}
        {live.state === 'reconnecting' && `The connection dropped: resuming after item ${live.lastId || 'none'}…`}
      </p>
      <ProblemAlert problem={live.state === 'done' ? live.problem : undefined} />
      <dl class="facts" data-testid="seeding-progress">
        {OUTCOMES.filter((o) => run.progress[o] > 0).map((o) => (
          <Fragment key={o}>
            <dt>{o.replace('_', ' ')}</dt>
            <dd>{run.progress[o]}</dd>
          </Fragment>
        ))}
      </dl>
      {live.items.length > 0 && (
        <ol class="steps" aria-label="Decided while you watched">
          {live.items.map((i) => (
            <li key={i.seq}>
              {i.index}: {i.title || i.key}, {i.outcome.replace('_', ' ')}
              {i.reason && ` (${i.reason})`}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

export function SeedingRunPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const path = `/organizations/${organization.organization_id}/seeding-runs/${encodeURIComponent(params.id)}`;
  const [version, setVersion] = useState(0);
  const reread = () => setVersion((v) => v + 1);
  const fetched = useResource<SeedingRun>(path, version);
  const live = useSeedingEvents(path, fetched.data, reread);
  const run = live.run ?? fetched.data;
  const action = useAction(reread);
  const cancel = () => {
    if (!confirmed('Cancel this seeding run? Items not yet written are skipped; memories already written stay.')) return;
    void action.run(async () => {
      await api.call('POST', `${path}/cancel`, { body: { reason: 'cancelled from the dashboard' } });
      return 'Seeding run cancelled.';
    });
  };
  return (
    <Page title={run ? `Seeding ${run.source.name}` : 'Seeding run'}>
      <p>
        <a href={`${settings.basePath}/seeding`}>All seeding runs</a>
      </p>
      <ProblemAlert problem={fetched.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {run && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd data-testid="seeding-status">{run.status}</dd>
            <dt>Source</dt>
            <dd>
              {run.source.kind === 'url' ? 'the page' : 'the file'} {run.source.name} ({run.source.media_type}, {run.source.bytes} bytes)
            </dd>
            <dt>Into</dt>
            <dd>
              {run.namespace}, keys under “{run.key_prefix}”{run.tags.length > 0 && `, tagged ${run.tags.join(', ')}`}
              {run.review && ', held for review'}
            </dd>
            <dt>Started</dt>
            <dd>{when(run.created_at)}</dd>
            {run.finished_at && (
              <>
                <dt>Finished</dt>
                <dd>{when(run.finished_at)}</dd>
              </>
            )}
            {(run.error || run.stop_reason) && (
              <>
                <dt>Stopped</dt>
                <dd>{[run.stop_reason, run.error].filter(Boolean).join(': ')}</dd>
              </>
            )}
          </dl>
          {can(organization.role, 'cancelSeedingRun') && !finished(run) && (
            <button type="button" class="danger" onClick={cancel}>
              Cancel the seeding run
            </button>
          )}
          <Progress run={run} live={live} />
          <SeedingItems path={path} run={run} version={version + live.progressed} reviewed={reread} />
        </>
      )}
    </Page>
  );
}
