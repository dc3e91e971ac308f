// The queue of contradictions and open questions: both listed page by page, open ones first by
// default (or by another status); members and above resolve one (saying how) or dismiss one
// (saying why), only while it is still open, and flag a contradiction or ask a question by hand
// (raise-items.tsx, loaded on demand).
import { useState } from 'preact/hooks';
import { deferred } from '../deferred.tsx';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when, type Paged } from '../ui.tsx';

interface Item {
  id: string;
  kind: 'contradiction' | 'question';
  status: string;
  text: string;
  memories: string[];
  entities: string[];
  resolution: string;
  created_at: string | null;
  resolved_at: string | null;
}

const STATUSES = ['open', 'resolved', 'dismissed', 'obsolete'] as const;
const FlagContradiction = deferred(() => import('./raise-items.tsx').then((m) => m.FlagContradiction));
const AskQuestion = deferred(() => import('./raise-items.tsx').then((m) => m.AskQuestion));

/** `settled` is told the notice once it is closed (it then leaves the open list; the list says it). */
function Settle({ path, item, settled }: { path: string; item: Item; settled: (notice: string) => void }) {
  const { api } = useSession();
  const [resolution, setResolution] = useState('');
  const action = useAction(() => {});
  const settle = (status: 'resolved' | 'dismissed') =>
    void action.run(async () => {
      await api.call('POST', `${path}/${item.id}/resolve`, { body: { status, resolution } });
      settled(`${item.kind === 'contradiction' ? 'Contradiction' : 'Question'} ${item.id} ${status}.`);
      return '';
    });
  const id = `settle-${item.id}`;
  return (
    <form
      class="stacked-form"
      onSubmit={(e) => {
        e.preventDefault();
        settle('resolved');
      }}
    >
      <label for={id}>
        {item.kind === 'contradiction' ? 'How it was settled, or why it is dismissed' : 'The answer, or why it is dismissed'}
      </label>
      <textarea id={id} required rows={2} maxLength={2000} value={resolution} onInput={(e) => setResolution(e.currentTarget.value)} />
      <p class="actions">
        <button type="submit" disabled={action.busy}>
          Resolve {item.id}
        </button>
        <button
          type="button"
          disabled={action.busy}
          onClick={(e) => {
            if (e.currentTarget.form?.reportValidity()) settle('dismissed');
          }}
        >
          Dismiss {item.id}
        </button>
      </p>
      <ProblemAlert problem={action.problem} />
    </form>
  );
}

function ItemList({ title, path, items, mayResolve }: { title: string; path: string; items: Paged<Item>; mayResolve: boolean }) {
  const [notice, setNotice] = useState('');
  const settled = (said: string) => {
    setNotice(said);
    items.reload();
  };
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      <ProblemAlert problem={items.problem} />
      <p role="status">{notice}</p>
      {items.items.map((item) => (
        <article key={item.id} class="memory" aria-label={`${item.kind} ${item.id}`}>
          <p class="content">{item.text}</p>
          <p class="meta">
            <code>{item.id}</code> · {item.status} · raised {when(item.created_at)}
            {item.resolved_at && ` · closed ${when(item.resolved_at)}`}
          </p>
          {item.memories.length > 0 && <p class="meta">Memories: {item.memories.join(', ')}</p>}
          {item.entities.length > 0 && <p class="meta">Entities: {item.entities.join(', ')}</p>}
          {item.resolution && <p>Settled: {item.resolution}</p>}
          {mayResolve && item.status === 'open' && <Settle path={path} item={item} settled={settled} />}
        </article>
      ))}
      {!items.loading && items.items.length === 0 && !items.problem && <p>None.</p>}
      <MoreButton paged={items} label={`More ${title.toLowerCase()}`} />
    </section>
  );
}

export function ContradictionsPage() {
  const { organization } = useSession();
  const base = `/organizations/${organization.organization_id}`;
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('open');
  const contradictions = usePaged<Item>(`${base}/contradictions?status=${status}&page_size=20`, 'contradictions');
  const questions = usePaged<Item>(`${base}/questions?status=${status}&page_size=20`, 'questions');
  return (
    <Page title="Contradictions and questions">
      <div class="inline-form">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value as (typeof STATUSES)[number])}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      {can(organization.role, 'flagContradiction') && <FlagContradiction base={base} raised={contradictions.reload} />}
      {can(organization.role, 'askQuestion') && <AskQuestion base={base} raised={questions.reload} />}
      <ItemList
        title="Contradictions"
        path={`${base}/contradictions`}
        items={contradictions}
        mayResolve={can(organization.role, 'resolveContradiction')}
      />
      <ItemList
        title="Open questions"
        path={`${base}/questions`}
        items={questions}
        mayResolve={can(organization.role, 'resolveQuestion')}
      />
    </Page>
  );
}
