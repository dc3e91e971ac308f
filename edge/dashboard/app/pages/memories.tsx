// The Brain's memories, both namespaces: the newest first page by page, or a search ranked as
// the agents' searches are, each with its version history; members and above write, edit and
// delete them (edits and deletions at the version shown, so that a memory changed meanwhile is
// not overwritten or deleted blindly) and record by hand whether one worked in use
// (memory-feedback.tsx, loaded when first opened). `?namespace=&key=` opens one memory on its own.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { deferred } from '../deferred.tsx';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource, when } from '../ui.tsx';
import { EditMemory } from './memory-edit.tsx';
import type { Memory } from './memory-types.ts';
import { MemoryVersions } from './memory-versions.tsx';

const NAMESPACES = ['knowledge', 'episodes'] as const;
const MemoryFeedback = deferred(() => import('./memory-feedback.tsx').then((m) => m.MemoryFeedback));

interface CardProps {
  base: string;
  memory: Memory;
  score?: number;
  onDelete?: (m: Memory) => void;
  /** Set when the role may edit: called after a saved edit. */
  onEdited?: () => void;
}

function MemoryCard({ base, memory, score, onDelete, onEdited }: CardProps) {
  const { organization } = useSession();
  const mayFeedback = can(organization.role, 'recordMemoryFeedback');
  const [open, setOpen] = useState<'' | 'edit' | 'versions' | 'feedback'>('');
  const [notice, setNotice] = useState('');
  const path = `${base}/${memory.namespace}/${encodeURIComponent(memory.key)}`;
  const toggle = (what: 'edit' | 'versions' | 'feedback') => {
    setNotice('');
    setOpen((o) => (o === what ? '' : what));
  };
  return (
    <article class="memory" aria-label={memory.title || memory.key}>
      <h2>{memory.title || memory.key}</h2>
      <p class="meta">
        <code>{memory.key}</code> · version {memory.version} · {when(memory.updated_at)} · by{' '}
        {memory.written_by.client_name || memory.written_by.client_id || 'unknown'} <code>{memory.written_by.user_id}</code> · worked{' '}
        {memory.feedback.worked}, failed {memory.feedback.failed}
        {score !== undefined && ` · score ${score.toFixed(3)}`}
      </p>
      <p class="content">{memory.content}</p>
      {memory.tags.length > 0 && <p class="meta">Tags: {memory.tags.join(', ')}</p>}
      <p class="actions">
        <button type="button" aria-expanded={open === 'versions'} onClick={() => toggle('versions')}>
          Versions of {memory.key}
        </button>
        {onEdited && (
          <button type="button" aria-expanded={open === 'edit'} onClick={() => toggle('edit')}>
            Edit {memory.key}
          </button>
        )}
        {mayFeedback && (
          <button type="button" aria-expanded={open === 'feedback'} onClick={() => toggle('feedback')}>
            Feedback on {memory.key}
          </button>
        )}
        {onDelete && (
          <button type="button" class="danger" onClick={() => onDelete(memory)}>
            Delete {memory.key}
          </button>
        )}
      </p>
      {open === 'versions' && <MemoryVersions path={path} memory={memory} />}
      {open === 'edit' && onEdited && (
        <EditMemory
          path={path}
          memory={memory}
          saved={(said) => {
            setNotice(said);
            setOpen('');
            onEdited();
          }}
        />
      )}
      {open === 'feedback' && (
        <MemoryFeedback
          base={base}
          memory={memory}
          recorded={(said) => {
            setNotice(said);
            setOpen('');
            // The card shows the feedback counts: the list reads them again.
            onEdited?.();
          }}
        />
      )}
      <p role="status">{notice}</p>
    </article>
  );
}

function WriteMemory({ path, namespace, after }: { path: string; namespace: string; after: () => void }) {
  const { api } = useSession();
  const [key, setKey] = useState('');
  const [title, setTitle] = useState('');
  const [content, setContent] = useState('');
  const action = useAction(after);
  const write = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.call('POST', path, { body: { namespace, key, title, content }, idempotencyKey: crypto.randomUUID() });
      setKey('');
      setTitle('');
      setContent('');
      return `Memory ${key} written.`;
    });
  };
  return (
    <details>
      <summary>Write a memory in {namespace}</summary>
      <form onSubmit={write} class="stacked-form">
        <label>
          Key
          <input required maxLength={200} value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </label>
        <label>
          Title
          <input maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        </label>
        <label>
          Content
          <textarea required rows={4} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Write memory
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

function OneMemory({
  base,
  namespace,
  memoryKey,
  onEdited,
}: {
  base: string;
  namespace: string;
  memoryKey: string;
  onEdited?: () => void;
}) {
  const { settings } = useSession();
  const [version, setVersion] = useState(0);
  const one = useResource<Memory>(`${base}/${namespace}/${encodeURIComponent(memoryKey)}`, version);
  return (
    <Page title={`Memory ${namespace}/${memoryKey}`}>
      <p>
        <a href={`${settings.basePath}/memories?namespace=${namespace}`}>All memories in {namespace}</a>
      </p>
      <ProblemAlert problem={one.problem} />
      {one.data && (
        <MemoryCard
          base={base}
          memory={one.data}
          onEdited={
            onEdited &&
            (() => {
              onEdited();
              setVersion((v) => v + 1);
            })
          }
        />
      )}
    </Page>
  );
}

export function MemoriesPage() {
  const { api, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/memories`;
  // `?namespace=episodes` (the Overview's links) opens that namespace.
  const { query: linked } = useLocation();
  const [namespace, setNamespace] = useState<(typeof NAMESPACES)[number]>(linked.namespace === 'episodes' ? 'episodes' : 'knowledge');
  const [query, setQuery] = useState('');
  const [searched, setSearched] = useState('');
  const [version, setVersion] = useState(0);
  const list = usePaged<Memory>(linked.key ? null : `${base}?namespace=${namespace}&page_size=20`, 'memories');
  const search = useResource<{ results: { memory: Memory; score: number }[] }>(
    searched ? `${base}/search?${new URLSearchParams({ q: searched, namespace, limit: '20' })}` : null,
    version,
  );
  const refresh = () => {
    list.reload();
    setVersion((v) => v + 1);
  };
  const action = useAction(refresh);
  const mayWrite = can(organization.role, 'deleteMemory');
  const remove = (m: Memory) => {
    if (!confirmed(`Delete the memory ${m.key}? Agents will no longer find it.`)) return;
    void action.run(async () => {
      await api.call('DELETE', `${base}/${m.namespace}/${encodeURIComponent(m.key)}?expected_version=${m.version}`);
      return `Memory ${m.key} deleted.`;
    });
  };
  const onDelete = mayWrite ? remove : undefined;
  const onEdited = can(organization.role, 'updateMemory') ? refresh : undefined;
  // `?namespace=…&key=…` (an investigation's memories link so) opens that one memory.
  if (linked.key) {
    const linkedNamespace = linked.namespace === 'episodes' ? 'episodes' : 'knowledge';
    return <OneMemory base={base} namespace={linkedNamespace} memoryKey={linked.key} onEdited={onEdited} />;
  }

  return (
    <Page title="Memories">
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          setSearched(query.trim());
        }}
      >
        <label>
          Namespace
          <select value={namespace} onChange={(e) => setNamespace(e.currentTarget.value as (typeof NAMESPACES)[number])}>
            {NAMESPACES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          Search
          <input type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      {mayWrite && <WriteMemory path={base} namespace={namespace} after={refresh} />}
      <ProblemAlert problem={list.problem ?? search.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {searched ? (
        <>
          <p>
            Results for “{searched}”, best first.{' '}
            <button type="button" onClick={() => setSearched('')}>
              Show all
            </button>
          </p>
          {search.data?.results.map((r) => (
            <MemoryCard key={r.memory.key} base={base} memory={r.memory} score={r.score} onDelete={onDelete} onEdited={onEdited} />
          ))}
        </>
      ) : (
        <>
          {list.items.map((m) => (
            <MemoryCard key={m.key} base={base} memory={m} onDelete={onDelete} onEdited={onEdited} />
          ))}
          {!list.loading && list.items.length === 0 && !list.problem && <p>No memories in {namespace} yet.</p>}
          <MoreButton paged={list} label="More memories" />
        </>
      )}
    </Page>
  );
}
