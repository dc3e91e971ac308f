// Entities of the memory graph: every entity, oldest first, of one kind or all, page by page; or
// a search by name or alias (exact, prefix, word and near spellings, best first). Each opens on
// its own page (entity.tsx) with its relationships and the memories citing them.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useResource, usePaged } from '../ui.tsx';

export interface Entity {
  id: string;
  name: string;
  kind: string;
  aliases: string[];
  description: string;
  relationship_count: number;
  updated_at: string | null;
}

export const KINDS = ['person', 'team', 'service', 'component', 'organization', 'document', 'other'] as const;

function EntityRow({ entity: e, extra }: { entity: Entity; extra?: string }) {
  const { settings } = useSession();
  return (
    <tr>
      <td>
        <a href={`${settings.basePath}/entities/${e.id}`}>{e.name}</a>
        {e.aliases.length > 0 && <span class="meta"> also {e.aliases.join(', ')}</span>}
      </td>
      <td>{e.kind || '—'}</td>
      <td>{e.relationship_count}</td>
      <td>{extra ?? e.description}</td>
    </tr>
  );
}

function Head({ last }: { last: string }) {
  return (
    <thead>
      <tr>
        <th scope="col">Entity</th>
        <th scope="col">Kind</th>
        <th scope="col">Relationships</th>
        <th scope="col">{last}</th>
      </tr>
    </thead>
  );
}

function SearchResults({ path, q, kind }: { path: string; q: string; kind: string }) {
  const query = new URLSearchParams({ q, limit: '50', ...(kind ? { kind } : {}) });
  const found = useResource<{ matches: { entity: Entity; matched: string; score: number }[] }>(`${path}/search?${query}`);
  return (
    <>
      <ProblemAlert problem={found.problem} />
      <table>
        <caption>Entities matching “{q}”</caption>
        <Head last="Matched" />
        <tbody>
          {found.data?.matches.map((m) => (
            <EntityRow key={m.entity.id} entity={m.entity} extra={`${m.matched} (score ${m.score.toFixed(2)})`} />
          ))}
        </tbody>
      </table>
      {found.data && found.data.matches.length === 0 && <p>No entity matches.</p>}
    </>
  );
}

function AllEntities({ path, kind }: { path: string; kind: string }) {
  const entities = usePaged<Entity>(kind ? `${path}?kind=${kind}` : path, 'entities');
  return (
    <>
      <ProblemAlert problem={entities.problem} />
      <table>
        <caption>Entities{kind ? ` of kind ${kind}` : ''}, oldest first</caption>
        <Head last="Description" />
        <tbody>
          {entities.items.map((e) => (
            <EntityRow key={e.id} entity={e} />
          ))}
        </tbody>
      </table>
      {!entities.loading && entities.items.length === 0 && !entities.problem && (
        <p>No entities yet: they come from the memories agents write.</p>
      )}
      <MoreButton paged={entities} label="More entities" />
    </>
  );
}

export function EntitiesPage() {
  const { organization } = useSession();
  const path = `/organizations/${organization.organization_id}/graph/entities`;
  const [text, setText] = useState('');
  const [kind, setKind] = useState('');
  const [q, setQ] = useState('');
  return (
    <Page title="Entities">
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(text.trim());
        }}
      >
        <label>
          Name or alias
          <input type="search" maxLength={200} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
            <option value="">any</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Find entities</button>
        {q && (
          <button
            type="button"
            onClick={() => {
              setText('');
              setQ('');
            }}
          >
            List all
          </button>
        )}
      </form>
      {q ? <SearchResults path={path} q={q} kind={kind} /> : <AllEntities path={path} kind={kind} />}
    </Page>
  );
}
