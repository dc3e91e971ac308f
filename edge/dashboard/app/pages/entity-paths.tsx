// The path finder: the shortest chains of relationships from this entity to another (named by
// name, alias or id), either way or only forward, each step with its predicate and the memories
// citing it, each entity on the way linking to its page.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useResource } from '../ui.tsx';
import type { Entity } from './entities.tsx';

interface Step {
  relationship: {
    subject_id: string;
    subject_name: string;
    predicate: string;
    object_id: string;
    object_name: string;
    citations: { namespace: string; key: string }[];
  };
  reversed: boolean;
}

interface Paths {
  from: Entity;
  to: Entity;
  paths: { entity_ids: string[]; steps: Step[] }[];
  truncated: boolean;
}

function PathSteps({ from, steps }: { from: Entity; steps: Step[] }) {
  const { settings } = useSession();
  const link = (id: string, name: string) => <a href={`${settings.basePath}/entities/${id}`}>{name}</a>;
  return (
    <li>
      {link(from.id, from.name)}
      {steps.map((s, i) => {
        const r = s.relationship;
        const cited = r.citations.map((c) => `${c.namespace}/${c.key}`).join(', ');
        return (
          <span key={`${r.subject_id}-${r.predicate}-${r.object_id}-${i}`}>
            {' '}
            <span class="step" title={cited ? `cited by ${cited}` : undefined}>
              {s.reversed ? `← ${r.predicate} —` : `— ${r.predicate} →`}
            </span>{' '}
            {s.reversed ? link(r.subject_id, r.subject_name) : link(r.object_id, r.object_name)}
          </span>
        );
      })}
    </li>
  );
}

export function EntityPaths({ base, entity }: { base: string; entity: Entity }) {
  const [to, setTo] = useState('');
  const [depth, setDepth] = useState('4');
  const [forward, setForward] = useState(false);
  const [asked, setAsked] = useState<string>();
  const found = useResource<Paths>(asked ? `${base}/paths?${asked}` : null);
  const find = (e: Event) => {
    e.preventDefault();
    setAsked(
      new URLSearchParams({ from: entity.id, to: to.trim(), max_depth: depth, max_paths: '5', forward: String(forward) }).toString(),
    );
  };
  const paths = found.data?.paths ?? [];
  return (
    <section aria-labelledby="paths-title">
      <h2 id="paths-title">Paths to another entity</h2>
      <form onSubmit={find} class="inline-form">
        <label>
          To (name, alias or id)
          <input required maxLength={200} value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <label>
          Steps at most
          <select value={depth} onChange={(e) => setDepth(e.currentTarget.value)}>
            {['1', '2', '3', '4', '5', '6'].map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </label>
        <label class="check">
          <input type="checkbox" checked={forward} onChange={(e) => setForward(e.currentTarget.checked)} /> Only subject to object
        </label>
        <button type="submit">Find paths</button>
      </form>
      <ProblemAlert problem={found.problem} />
      {found.data && (
        <>
          <p role="status">
            {paths.length === 0
              ? `No path from ${found.data.from.name} to ${found.data.to.name} within ${depth} step(s).`
              : `${paths.length} path(s) from ${found.data.from.name} to ${found.data.to.name}, shortest first${found.data.truncated ? ' (more exist)' : ''}.`}
          </p>
          <ol data-testid="entity-paths">
            {paths.map((p) => (
              <PathSteps key={p.entity_ids.join('>')} from={found.data!.from} steps={p.steps} />
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
