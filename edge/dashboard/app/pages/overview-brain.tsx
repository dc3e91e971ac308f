// The Brain on the Overview: the newest memories of both namespaces, and the open contradictions
// and questions, a few of each, linking to the screens that show them all.
import { useSession } from '../session.tsx';
import { ProblemAlert, useResource, when } from '../ui.tsx';
import type { Memory } from './memory-types.ts';

const SHOWN = 5;

interface Item {
  id: string;
  text: string;
  created_at: string | null;
}

/** The newest of both namespaces, newest first. */
function newest(...lists: (Memory[] | undefined)[]): Memory[] {
  return lists
    .flatMap((l) => l ?? [])
    .sort((a, b) => (b.updated_at ?? '').localeCompare(a.updated_at ?? ''))
    .slice(0, SHOWN);
}

function RecentMemories({ base }: { base: string }) {
  const { settings } = useSession();
  const knowledge = useResource<{ memories: Memory[] }>(`${base}/memories?namespace=knowledge&page_size=${SHOWN}`);
  const episodes = useResource<{ memories: Memory[] }>(`${base}/memories?namespace=episodes&page_size=${SHOWN}`);
  const memories = newest(knowledge.data?.memories, episodes.data?.memories);
  const loaded = knowledge.data && episodes.data;
  return (
    <section aria-labelledby="recent-memories">
      <h2 id="recent-memories">Recent memories</h2>
      <ProblemAlert problem={knowledge.problem ?? episodes.problem} />
      <ul data-testid="recent-memories">
        {memories.map((m) => (
          <li key={`${m.namespace}/${m.key}`}>
            <a href={`${settings.basePath}/memories?namespace=${m.namespace}`}>{m.title || m.key}</a>{' '}
            <code>{`${m.namespace}/${m.key}`}</code> version {m.version}, {when(m.updated_at)}, by{' '}
            {m.written_by.client_name || m.written_by.client_id || 'unknown'}
          </li>
        ))}
      </ul>
      {loaded && memories.length === 0 && <p>No memories yet: connect an MCP client below and let it write some.</p>}
    </section>
  );
}

function OpenItems({ base, kind }: { base: string; kind: 'contradictions' | 'questions' }) {
  const { settings } = useSession();
  const open = useResource<Record<string, Item[] | string | null>>(`${base}/${kind}?status=open&page_size=${SHOWN}`);
  const items = (open.data?.[kind] ?? []) as Item[];
  const more = Boolean(open.data?.next_page_token);
  const title = kind === 'contradictions' ? 'Open contradictions' : 'Open questions';
  return (
    <section aria-labelledby={`open-${kind}`}>
      <h2 id={`open-${kind}`}>{title}</h2>
      <ProblemAlert problem={open.problem} />
      <ul data-testid={`open-${kind}`}>
        {items.map((i) => (
          <li key={i.id}>
            <a href={`${settings.basePath}/contradictions`}>{i.text}</a> <span class="meta">{when(i.created_at)}</span>
          </li>
        ))}
      </ul>
      {open.data && items.length === 0 && <p>None open.</p>}
      {more && (
        <p>
          <a href={`${settings.basePath}/contradictions`}>All {title.toLowerCase()}</a>
        </p>
      )}
    </section>
  );
}

export function BrainAtAGlance({ base }: { base: string }) {
  return (
    <>
      <RecentMemories base={base} />
      <OpenItems base={base} kind="contradictions" />
      <OpenItems base={base} kind="questions" />
    </>
  );
}
