// One team: its members by name, in the order they were added, and what it may reach in the Brain;
// admins and owners add a member of the organization to it and take one out, rename it, and
// narrow or lift its Brain access (team-settings.tsx).
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource, when } from '../ui.tsx';
import { type Member, Person, personOf } from './members.tsx';
import { accessText, RenameTeam, type Team, TeamBrainAccess } from './team-settings.tsx';

interface TeamMember {
  user_id: string;
  name: string | null;
  email: string | null;
  added_at: string | null;
}

export function TeamPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const org = `/organizations/${organization.organization_id}`;
  const path = `${org}/teams/${params.id}`;
  const [version, setVersion] = useState(0);
  const team = useResource<Team>(path, version);
  const members = usePaged<TeamMember>(`${path}/members`, 'members');
  const mayEdit = can(organization.role, 'addTeamMember');
  const everyone = usePaged<Member>(mayEdit ? `${org}/members?page_size=100` : null, 'members');
  const [chosen, setChosen] = useState('');
  const action = useAction(() => {
    members.reload();
    setVersion((v) => v + 1);
  });
  const inTeam = new Set(members.items.map((m) => m.user_id));
  const candidates = everyone.items.filter((m) => !inTeam.has(m.user_id));
  const add = (e: Event) => {
    e.preventDefault();
    const who = candidates.find((m) => m.user_id === chosen);
    if (!who) return;
    void action.run(async () => {
      await api.call('PUT', `${path}/members/${who.user_id}`);
      setChosen('');
      return `${personOf(who)} added to the team.`;
    });
  };
  const remove = (m: TeamMember) => {
    if (!confirmed(`Take ${personOf(m)} out of the team? They stay in the organization.`)) return;
    void action.run(async () => {
      await api.call('DELETE', `${path}/members/${m.user_id}`);
      return `${personOf(m)} left the team.`;
    });
  };
  return (
    <Page title={team.data ? `Team ${team.data.name}` : 'Team'}>
      <p>
        <a href={`${settings.basePath}/teams`}>All teams</a>
      </p>
      {team.data?.description && <p>{team.data.description}</p>}
      {team.data && !can(organization.role, 'setTeamBrainAccess') && <p>In the Brain, its members reach: {accessText(team.data)}.</p>}
      {team.data && can(organization.role, 'updateTeam') && (
        <RenameTeam path={path} team={team.data} etag={team.etag} saved={() => setVersion((v) => v + 1)} />
      )}
      <ProblemAlert problem={team.problem ?? members.problem ?? everyone.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {mayEdit && (
        <form onSubmit={add} class="inline-form">
          <label>
            Member to add
            <select value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
              <option value="">Choose a member</option>
              {candidates.map((m) => (
                <option key={m.user_id} value={m.user_id}>
                  {personOf(m)}
                  {m.email && m.email !== personOf(m) ? ` (${m.email})` : ''}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={!chosen || action.busy}>
            Add to the team
          </button>
        </form>
      )}
      <table>
        <caption>Members of the team ({team.data?.member_count ?? '…'})</caption>
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Added</th>
            {mayEdit && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {members.items.map((m) => (
            <tr key={m.user_id}>
              <td>
                <Person person={m} />
              </td>
              <td>{when(m.added_at)}</td>
              {mayEdit && (
                <td>
                  <button type="button" class="danger" onClick={() => remove(m)}>
                    Take {personOf(m)} out
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {!members.loading && members.items.length === 0 && !members.problem && <p>No one in this team yet.</p>}
      <MoreButton paged={members} label="More team members" />
      {team.data && can(organization.role, 'setTeamBrainAccess') && (
        <TeamBrainAccess path={path} team={team.data} etag={team.etag} saved={() => setVersion((v) => v + 1)} />
      )}
    </Page>
  );
}
