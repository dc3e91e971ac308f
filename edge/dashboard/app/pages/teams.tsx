// Teams: list them with their size; admins and owners create and delete them. Each opens on its
// own page (team.tsx) with its members.
import { useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, toProblem, usePaged, when } from '../ui.tsx';

interface Team {
  id: string;
  name: string;
  description: string;
  member_count: number;
  created_at: string | null;
}

export function TeamsPage() {
  const { api, settings, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/teams`;
  const teams = usePaged<Team>(base, 'teams');
  const [problem, setProblem] = useState<ProblemDocument>();
  const [notice, setNotice] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');

  const act = async (what: () => Promise<string>) => {
    setProblem(undefined);
    setNotice('');
    try {
      setNotice(await what());
      teams.reload();
    } catch (err) {
      setProblem(toProblem(err));
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      await api.call('POST', base, { body: { name, ...(description ? { description } : {}) }, idempotencyKey: crypto.randomUUID() });
      setName('');
      setDescription('');
      return `Team ${name} created.`;
    });
  };
  const remove = (t: Team) => {
    if (!confirmed(`Delete the team ${t.name}? Its members stay in the organization.`)) return;
    void act(async () => {
      await api.call('DELETE', `${base}/${t.id}`);
      return `Team ${t.name} deleted.`;
    });
  };
  const mayEdit = can(organization.role, 'createTeam');

  return (
    <Page title="Teams">
      {mayEdit && (
        <form onSubmit={create} class="inline-form">
          <label>
            Team name
            <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <label>
            Description
            <input maxLength={1000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </label>
          <button type="submit">Create team</button>
        </form>
      )}
      <ProblemAlert problem={teams.problem ?? problem} />
      <p role="status">{notice}</p>
      <table>
        <caption>Teams of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Members</th>
            <th scope="col">Created</th>
            {mayEdit && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {teams.items.map((t) => (
            <tr key={t.id}>
              <td>
                <a href={`${settings.basePath}/teams/${t.id}`}>{t.name}</a>
              </td>
              <td>{t.description}</td>
              <td>{t.member_count}</td>
              <td>{when(t.created_at)}</td>
              {mayEdit && (
                <td>
                  <button type="button" class="danger" onClick={() => remove(t)}>
                    Delete {t.name}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={teams} label="More teams" />
    </Page>
  );
}
