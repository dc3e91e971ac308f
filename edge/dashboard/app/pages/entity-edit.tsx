// Changing an entity of the memory graph: its name, kind, aliases and description, at the version
// shown (If-Match: a change someone made meanwhile is refused, not overwritten); or merging
// another entity into it (found by name or alias; confirmed: the other's names become aliases
// here, its relationships move here, and its id answers as this one from then on).
import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { confirmed, ProblemAlert, useAction, useResource } from '../ui.tsx';
import { type Entity, KINDS } from './entities.tsx';

const aliasList = (text: string) =>
  text
    .split(/[\n,]/)
    .map((a) => a.trim())
    .filter(Boolean);

export function EditEntity({ path, entity, etag, saved }: { path: string; entity: Entity; etag: string | null; saved: () => void }) {
  const { api } = useSession();
  const [f, setF] = useState({ name: '', kind: '', aliases: '', description: '' });
  useEffect(
    () => setF({ name: entity.name, kind: entity.kind, aliases: entity.aliases.join(', '), description: entity.description }),
    [entity],
  );
  const set = (k: keyof typeof f) => (e: { currentTarget: { value: string } }) => setF({ ...f, [k]: e.currentTarget.value });
  const action = useAction(saved);
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { name: f.name, aliases: aliasList(f.aliases), description: f.description, ...(f.kind ? { kind: f.kind } : {}) };
      const { data } = await api.call<Entity>('PATCH', path, { body, ifMatch: etag ?? undefined });
      return `${data.name} saved.`;
    });
  };
  return (
    <details>
      <summary>Edit the entity</summary>
      <form onSubmit={save} class="stacked-form">
        <label>
          Name
          <input required maxLength={200} value={f.name} onInput={set('name')} />
        </label>
        <label>
          Kind
          <select value={f.kind} onChange={set('kind')}>
            <option value="">unknown</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          Also known as (comma-separated)
          <input value={f.aliases} onInput={set('aliases')} />
        </label>
        <label>
          Description
          <textarea rows={3} maxLength={2000} value={f.description} onInput={set('description')} />
        </label>
        <button type="submit" disabled={action.busy}>
          Save the entity
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function MergeEntity({ path, entity, merged }: { path: string; entity: Entity; merged: () => void }) {
  const { api } = useSession();
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  const base = path.slice(0, path.lastIndexOf('/'));
  const found = useResource<{ matches: { entity: Entity; matched: string }[] }>(
    q ? `${base}/search?${new URLSearchParams({ q, limit: '5' })}` : null,
  );
  const others = (found.data?.matches ?? []).filter((m) => m.entity.id !== entity.id);
  const action = useAction(merged);
  const merge = (other: Entity) => {
    if (!confirmed(`Merge ${other.name} into ${entity.name}? ${other.name} becomes an alias, and its relationships move here.`)) return;
    void action.run(async () => {
      const { data } = await api.call<{ moved_relationships: number }>('POST', `${path}/merge`, { body: { source_entity_id: other.id } });
      setQ('');
      return `${other.name} merged into ${entity.name}: ${data.moved_relationships} relationship(s) moved.`;
    });
  };
  return (
    <details>
      <summary>Merge another entity into this one</summary>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(text.trim());
        }}
      >
        <label>
          The other entity's name or alias
          <input type="search" required maxLength={200} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <button type="submit">Find it</button>
      </form>
      <ProblemAlert problem={found.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {q && found.data && others.length === 0 && <p>No other entity matches “{q}”.</p>}
      <ul>
        {others.map((m) => (
          <li key={m.entity.id}>
            {m.entity.name} <code>{m.entity.id}</code> ({m.entity.kind || 'unknown'}, {m.entity.relationship_count} relationships){' '}
            <button type="button" class="danger" onClick={() => merge(m.entity)} disabled={action.busy}>
              Merge {m.entity.name} into {entity.name}
            </button>
          </li>
        ))}
      </ul>
    </details>
  );
}
