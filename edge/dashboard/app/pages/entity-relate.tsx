// Asserting a relationship by hand: this entity and another (created when new) related by a
// predicate, either way, cited by a memory of the organization (a relationship stays while a
// memory states it; the API refuses one that does not exist, naming `body.memory`).
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';
import type { Entity } from './entities.tsx';

/** The graph's shared vocabulary (docs/graph.md); any other predicate is taken as written. */
const PREDICATES = [
  'depends_on',
  'calls',
  'runs_on',
  'owned_by',
  'member_of',
  'part_of',
  'deployed_to',
  'stores_data_in',
  'alerts_to',
  'replaced_by',
];

export function RelateEntity({ graph, entity, related }: { graph: string; entity: Entity; related: () => void }) {
  const { api } = useSession();
  const [f, setF] = useState({ predicate: 'depends_on', other: '', outgoing: 'true', namespace: 'knowledge', key: '' });
  const set = (k: keyof typeof f) => (e: { currentTarget: { value: string } }) => setF({ ...f, [k]: e.currentTarget.value });
  const action = useAction(related);
  const relate = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const [subject, object] = f.outgoing === 'true' ? [entity.name, f.other] : [f.other, entity.name];
      const body = { subject, predicate: f.predicate, object, memory: { namespace: f.namespace, key: f.key.trim() } };
      await api.call('POST', `${graph}/relationships`, { body, idempotencyKey: crypto.randomUUID() });
      setF({ ...f, other: '' });
      return `Related: ${subject} ${f.predicate} ${object}.`;
    });
  };
  return (
    <details>
      <summary>Relate it to another entity</summary>
      <form onSubmit={relate} class="stacked-form">
        <label>
          Which way
          <select value={f.outgoing} onChange={set('outgoing')}>
            <option value="true">{entity.name} → the other</option>
            <option value="false">the other → {entity.name}</option>
          </select>
        </label>
        <label>
          Predicate (from the vocabulary, or your own)
          <input required list="predicates" maxLength={64} value={f.predicate} onInput={set('predicate')} />
          <datalist id="predicates">
            {PREDICATES.map((p) => (
              <option key={p} value={p} />
            ))}
          </datalist>
        </label>
        <label>
          The other entity (name, alias or id; a new name creates it)
          <input required maxLength={200} value={f.other} onInput={set('other')} />
        </label>
        <label>
          Namespace of the memory that states it
          <select value={f.namespace} onChange={set('namespace')}>
            <option value="knowledge">knowledge</option>
            <option value="episodes">episodes</option>
          </select>
        </label>
        <label>
          Key of the memory that states it
          <input required maxLength={200} value={f.key} onInput={set('key')} placeholder="services/checkout" />
        </label>
        <button type="submit" disabled={action.busy}>
          Assert the relationship
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}
