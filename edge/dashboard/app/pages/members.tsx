// Members: everyone in the organization by name and e-mail address, with their role; admins and
// owners change roles and remove members (only an owner touches owners), and anyone may leave.
import { useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { can, grantable, OWNER_GRANTED, type Role } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, toProblem, usePaged, when } from '../ui.tsx';

export interface Member {
  user_id: string;
  name: string | null;
  email: string | null;
  role: Role;
  created_at: string | null;
}

/** How a person is called on the screens: their name, else their address, else their user id. */
export const personOf = (p: { user_id: string; name: string | null; email: string | null }) => p.name || p.email || p.user_id;

export function Person({ person: p }: { person: { user_id: string; name: string | null; email: string | null } }) {
  return (
    <>
      {personOf(p)}
      {p.email && p.email !== personOf(p) && <span class="meta"> {p.email}</span>} <code class="meta">{p.user_id}</code>
    </>
  );
}

export function MembersPage() {
  const { api, me, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/members`;
  const members = usePaged<Member>(base, 'members');
  const [problem, setProblem] = useState<ProblemDocument>();
  const [notice, setNotice] = useState('');
  const mine = organization.role;

  const act = async (what: () => Promise<unknown>, done: string) => {
    setProblem(undefined);
    setNotice('');
    try {
      await what();
      setNotice(done);
      members.reload();
    } catch (err) {
      setProblem(toProblem(err));
    }
  };
  const changeRole = (m: Member, role: string) =>
    act(() => api.call('PATCH', `${base}/${m.user_id}`, { body: { role } }), `${personOf(m)} is now ${role}.`);
  const remove = (m: Member) => {
    const self = m.user_id === me.id;
    if (!confirmed(self ? 'Leave this organization?' : `Remove ${personOf(m)} from the organization?`)) return;
    void act(() => api.call('DELETE', `${base}/${m.user_id}`), self ? 'You left the organization.' : `${personOf(m)} was removed.`);
  };
  const mayTouch = (m: Member) => can(mine, 'updateMember') && (!OWNER_GRANTED.has(m.role) || mine === 'owner');

  return (
    <Page title="Members">
      <ProblemAlert problem={members.problem ?? problem} />
      <p role="status">{notice}</p>
      <table>
        <caption>Members of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Member</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {members.items.map((m) => (
            <tr key={m.user_id}>
              <td>
                <Person person={m} />
                {m.user_id === me.id && ' (you)'}
              </td>
              <td>
                {mayTouch(m) ? (
                  <select aria-label={`Role of ${personOf(m)}`} value={m.role} onChange={(e) => void changeRole(m, e.currentTarget.value)}>
                    {grantable(mine).map((r) => (
                      <option key={r} value={r}>
                        {r}
                      </option>
                    ))}
                  </select>
                ) : (
                  m.role
                )}
              </td>
              <td>{when(m.created_at)}</td>
              <td>
                {(mayTouch(m) || m.user_id === me.id) && (
                  <button type="button" class="danger" onClick={() => remove(m)}>
                    {m.user_id === me.id ? 'Leave' : `Remove ${personOf(m)}`}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={members} label="More members" />
    </Page>
  );
}
