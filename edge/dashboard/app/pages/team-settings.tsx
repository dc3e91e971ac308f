// A team's settings, for admins and owners: its name and description (at the version read,
// If-Match), and its access to the Brain: the namespaces and key prefixes its members (and the API
// keys naming it) may reach, or no narrowing at all (lifting it is confirmed: the team's members
// then reach what their other teams allow).
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { confirmed, ProblemAlert, useAction } from '../ui.tsx';

export interface Team {
  id: string;
  name: string;
  description: string;
  member_count: number;
  brain_access: { namespaces: string[]; key_prefixes: string[] } | null;
}

const NAMESPACES = ['knowledge', 'episodes'];

/** The team's Brain access in words. */
export function accessText(team: Team): string {
  const a = team.brain_access;
  if (!a) return 'not narrowed by this team';
  const namespaces = (a.namespaces.length ? a.namespaces : NAMESPACES).join(' and ');
  return `${namespaces}${a.key_prefixes.length ? `, keys starting with ${a.key_prefixes.join(', ')}` : ', every key'}`;
}

export function RenameTeam({ path, team, etag, saved }: { path: string; team: Team; etag: string | null; saved: () => void }) {
  const { api } = useSession();
  const [name, setName] = useState(team.name);
  const [description, setDescription] = useState(team.description);
  const action = useAction(saved);
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.call('PATCH', path, { body: { name, description }, ifMatch: etag ?? undefined });
      return `Team ${name} saved.`;
    });
  };
  return (
    <details>
      <summary>Rename the team</summary>
      <form onSubmit={save} class="stacked-form">
        <label>
          Team name
          <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Team description
          <input maxLength={1000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Save the team
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function TeamBrainAccess({ path, team, etag, saved }: { path: string; team: Team; etag: string | null; saved: () => void }) {
  const { api } = useSession();
  const [namespaces, setNamespaces] = useState(team.brain_access?.namespaces.length ? team.brain_access.namespaces : NAMESPACES);
  const [prefixes, setPrefixes] = useState((team.brain_access?.key_prefixes ?? []).join('\n'));
  const action = useAction(saved);
  const set = (e: Event) => {
    e.preventDefault();
    const keyPrefixes = prefixes
      .split('\n')
      .map((p) => p.trim())
      .filter(Boolean);
    void action.run(async () => {
      await api.call('PUT', `${path}/brain-access`, { body: { namespaces, key_prefixes: keyPrefixes }, ifMatch: etag ?? undefined });
      return `${team.name} now reaches only what it is given.`;
    });
  };
  const lift = () => {
    if (
      !confirmed(
        `Lift ${team.name}'s Brain restriction? Its members then reach what their other teams allow (everything, when none narrows them).`,
      )
    )
      return;
    void action.run(async () => {
      await api.call('DELETE', `${path}/brain-access`, { ifMatch: etag ?? undefined });
      return `${team.name} no longer narrows the Brain.`;
    });
  };
  return (
    <section aria-labelledby="brain-access-title">
      <h2 id="brain-access-title">Brain access</h2>
      <p data-testid="brain-access">Its members reach: {accessText(team)}.</p>
      <form onSubmit={set} class="stacked-form">
        <fieldset class="picks">
          <legend>Namespaces it may reach</legend>
          {NAMESPACES.map((n) => (
            <label key={n}>
              <input
                type="checkbox"
                checked={namespaces.includes(n)}
                onChange={(e) => setNamespaces(e.currentTarget.checked ? [...namespaces, n] : namespaces.filter((x) => x !== n))}
              />{' '}
              {n}
            </label>
          ))}
        </fieldset>
        <label>
          Key prefixes it may reach, one a line (none: every key)
          <textarea rows={3} value={prefixes} onInput={(e) => setPrefixes(e.currentTarget.value)} />
        </label>
        <p class="actions">
          <button type="submit" disabled={action.busy || namespaces.length === 0}>
            Narrow the team's access
          </button>
          {team.brain_access && (
            <button type="button" class="danger" disabled={action.busy} onClick={lift}>
              Lift the restriction
            </button>
          )}
        </p>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </section>
  );
}
