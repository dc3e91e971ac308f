// One entity of the memory graph: its names and description, its relationships both ways (each
// linking to the entity at the other end), and the memories that cite them; the path finder to
// another entity (entity-paths.tsx) and what its failure affects (entity-affected.tsx); members
// edit it or merge another into it (entity-edit.tsx), assert a relationship by hand
// (entity-relate.tsx), retract one whole or only one memory's citation of it (confirmed).
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, Page, ProblemAlert, useAction, useResource, when } from '../ui.tsx';
import type { Entity } from './entities.tsx';
import { EditEntity, MergeEntity } from './entity-edit.tsx';
import { EntityAffected } from './entity-affected.tsx';
import { EntityPaths } from './entity-paths.tsx';
import { RelateEntity } from './entity-relate.tsx';

interface Citation {
  namespace: string;
  key: string;
  version: number;
  origin: string;
  title: string;
  asserted_at: string | null;
}

interface Relationship {
  id: string;
  subject_id: string;
  subject_name: string;
  predicate: string;
  object_id: string;
  object_name: string;
  citations: Citation[];
  citation_count: number;
}

interface EntityDetail extends Entity {
  outgoing: Relationship[];
  incoming: Relationship[];
  outgoing_total: number;
  incoming_total: number;
}

function Relationships({
  title,
  items,
  total,
  outgoing,
  retract,
}: {
  title: string;
  items: Relationship[];
  total: number;
  outgoing: boolean;
  /** Set when the role may retract one (whole, or only the citation given). */
  retract?: (r: Relationship, citation?: Citation) => void;
}) {
  const { settings } = useSession();
  const link = (id: string, name: string) => <a href={`${settings.basePath}/entities/${id}`}>{name}</a>;
  return (
    <table>
      <caption>
        {title} ({items.length < total ? `${items.length} of ${total}` : total})
      </caption>
      <thead>
        <tr>
          <th scope="col">{outgoing ? 'Relationship' : 'From'}</th>
          <th scope="col">{outgoing ? 'To' : 'Relationship'}</th>
          <th scope="col">Cited by</th>
          {retract && <th scope="col">Actions</th>}
        </tr>
      </thead>
      <tbody>
        {items.map((r) => (
          <tr key={r.id}>
            <td>{outgoing ? <code>{r.predicate}</code> : link(r.subject_id, r.subject_name)}</td>
            <td>{outgoing ? link(r.object_id, r.object_name) : <code>{r.predicate}</code>}</td>
            <td>
              {r.citations.map((c, i) => (
                <span key={`${c.namespace}/${c.key}`}>
                  {i > 0 && ', '}
                  {c.namespace}/{c.key}
                  {retract && (
                    <>
                      {' '}
                      <button
                        type="button"
                        class="danger"
                        aria-label={`Retract citation by ${c.namespace}/${c.key} of ${r.subject_name} ${r.predicate} ${r.object_name}`}
                        onClick={() => retract(r, c)}
                      >
                        Retract citation
                      </button>
                    </>
                  )}
                </span>
              ))}
              {r.citation_count > r.citations.length && ` and ${r.citation_count - r.citations.length} more`}
            </td>
            {retract && (
              <td>
                <button type="button" class="danger" onClick={() => retract(r)}>
                  Retract {r.subject_name} {r.predicate} {r.object_name}
                </button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Every memory citing one of the relationships, once, newest assertion first. */
function citingMemories(e: EntityDetail): Citation[] {
  const byKey = new Map<string, Citation>();
  for (const c of [...e.outgoing, ...e.incoming].flatMap((r) => r.citations)) {
    const id = `${c.namespace}/${c.key}`;
    const seen = byKey.get(id);
    if (!seen || (c.asserted_at ?? '') > (seen.asserted_at ?? '')) byKey.set(id, c);
  }
  return [...byKey.values()].sort((a, b) => (b.asserted_at ?? '').localeCompare(a.asserted_at ?? ''));
}

export function EntityPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const graph = `/organizations/${organization.organization_id}/graph`;
  const path = `${graph}/entities/${encodeURIComponent(params.id)}`;
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((v) => v + 1);
  const { data: e, etag, problem } = useResource<EntityDetail>(`${path}?limit=100`, version);
  const mayEdit = can(organization.role, 'updateEntity');
  const action = useAction(reload);
  const retract = (r: Relationship, citation?: Citation) => {
    const said = `${r.subject_name} ${r.predicate} ${r.object_name}`;
    const memory = citation && `${citation.namespace}/${citation.key}`;
    const question = memory
      ? `Retract ${memory}'s citation of “${said}”? ${r.citation_count > 1 ? 'The other citations stay.' : 'It is the only one: the relationship goes.'}`
      : `Retract “${said}”? Every memory's citation of it is removed; a later write of a memory stating it asserts it again.`;
    if (!confirmed(question)) return;
    void action.run(async () => {
      await api.call('DELETE', `${graph}/relationships/${r.id}${memory ? `?memory=${encodeURIComponent(memory)}` : ''}`);
      return memory ? `Retracted ${memory}'s citation of ${said}.` : `Retracted: ${said}.`;
    });
  };
  const mayRetract = can(organization.role, 'retractRelationship') ? retract : undefined;
  return (
    <Page title={e ? e.name : 'Entity'}>
      <p>
        <a href={`${settings.basePath}/entities`}>All entities</a>
      </p>
      <ProblemAlert problem={problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {e && (
        <>
          <dl class="facts">
            <dt>Kind</dt>
            <dd>{e.kind || '—'}</dd>
            <dt>Also known as</dt>
            <dd>{e.aliases.join(', ') || '—'}</dd>
            <dt>Description</dt>
            <dd>{e.description || '—'}</dd>
            <dt>Updated</dt>
            <dd>{when(e.updated_at)}</dd>
          </dl>
          {mayEdit && <EditEntity path={path} entity={e} etag={etag} saved={reload} />}
          {can(organization.role, 'mergeEntities') && <MergeEntity path={path} entity={e} merged={reload} />}
          {can(organization.role, 'assertRelationship') && <RelateEntity key={e.id} graph={graph} entity={e} related={reload} />}
          <Relationships title="Relationships from it" items={e.outgoing} total={e.outgoing_total} outgoing retract={mayRetract} />
          <Relationships title="Relationships to it" items={e.incoming} total={e.incoming_total} outgoing={false} retract={mayRetract} />
          <h2>Memories citing it</h2>
          <ul data-testid="citing-memories">
            {citingMemories(e).map((c) => (
              <li key={`${c.namespace}/${c.key}`}>
                <strong>{c.title || c.key}</strong> <code>{`${c.namespace}/${c.key}`}</code> version {c.version}, {c.origin},{' '}
                {when(c.asserted_at)}
              </li>
            ))}
          </ul>
          <EntityPaths base={graph} entity={e} />
          {can(organization.role, 'getAffectedEntities') && <EntityAffected key={e.id} path={path} entity={e} />}
        </>
      )}
    </Page>
  );
}
