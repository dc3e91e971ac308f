// What a failure of this entity affects (impact: what depends on it, and the wholes it is part
// of) or what it relies on (dependencies), nearest first, each entity with the chain of
// relationships that makes it so, each entity on the way linked.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useResource } from '../ui.tsx';
import type { Entity } from './entities.tsx';

interface Step {
  relationship: { subject_id: string; subject_name: string; predicate: string; object_id: string; object_name: string };
  reversed: boolean;
}

interface Affected {
  root: Entity;
  direction: 'impact' | 'dependencies';
  predicates: string[];
  affected: { entity: Entity; depth: number; path: Step[] }[];
  truncated: boolean;
}

const stepText = (s: Step) => `${s.relationship.subject_name} ${s.relationship.predicate} ${s.relationship.object_name}`;

export function EntityAffected({ path, entity }: { path: string; entity: Entity }) {
  const { settings } = useSession();
  const [direction, setDirection] = useState<'impact' | 'dependencies'>('impact');
  const [depth, setDepth] = useState('5');
  const [asked, setAsked] = useState<string>();
  const found = useResource<Affected>(asked ? `${path}/affected?${asked}` : null);
  const show = (e: Event) => {
    e.preventDefault();
    setAsked(new URLSearchParams({ direction, max_depth: depth, limit: '100' }).toString());
  };
  const data = found.data;
  return (
    <section aria-labelledby="affected-title">
      <h2 id="affected-title">What a failure affects</h2>
      <form onSubmit={show} class="inline-form">
        <label>
          Show
          <select value={direction} onChange={(e) => setDirection(e.currentTarget.value as 'impact' | 'dependencies')}>
            <option value="impact">what breaks if {entity.name} fails</option>
            <option value="dependencies">what {entity.name} relies on</option>
          </select>
        </label>
        <label>
          Hops at most
          <select value={depth} onChange={(e) => setDepth(e.currentTarget.value)}>
            {['1', '2', '3', '4', '5', '6', '7', '8', '9', '10'].map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Show the affected entities</button>
      </form>
      <ProblemAlert problem={found.problem} />
      {data && (
        <>
          <p role="status">
            {data.affected.length === 0
              ? `Nothing found within ${depth} hop(s) over ${data.predicates.join(', ')}.`
              : `${data.affected.length} entit${data.affected.length === 1 ? 'y' : 'ies'}, nearest first, over ${data.predicates.join(', ')}${data.truncated ? ' (more exist)' : ''}.`}
          </p>
          <table data-testid="affected-entities">
            <caption>{data.direction === 'impact' ? `Affected if ${data.root.name} fails` : `What ${data.root.name} relies on`}</caption>
            <thead>
              <tr>
                <th scope="col">Entity</th>
                <th scope="col">Hops</th>
                <th scope="col">Because</th>
              </tr>
            </thead>
            <tbody>
              {data.affected.map((a) => (
                <tr key={a.entity.id}>
                  <td>
                    <a href={`${settings.basePath}/entities/${a.entity.id}`}>{a.entity.name}</a>
                  </td>
                  <td>{a.depth}</td>
                  <td>{a.path.map(stepText).join('; ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
