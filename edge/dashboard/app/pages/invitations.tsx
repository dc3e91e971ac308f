// Invitations: invite an address with a role (only an owner invites an owner), see each
// invitation's state, resend a pending one's link, revoke it.
import { useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { grantable, type Role } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, toProblem, usePaged, when } from '../ui.tsx';

interface Invitation {
  id: string;
  email: string;
  role: Role;
  state: 'pending' | 'accepted' | 'revoked' | 'expired';
  created_at: string | null;
  expires_at: string | null;
}

export function InvitationsPage() {
  const { api, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/invitations`;
  const invitations = usePaged<Invitation>(base, 'invitations');
  const [problem, setProblem] = useState<ProblemDocument>();
  const [notice, setNotice] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [busy, setBusy] = useState(false);

  const act = async (what: () => Promise<string>) => {
    setProblem(undefined);
    setNotice('');
    setBusy(true);
    try {
      setNotice(await what());
      invitations.reload();
    } catch (err) {
      setProblem(toProblem(err));
    } finally {
      setBusy(false);
    }
  };
  const invite = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      const { data } = await api.call<{ email_delivery: string }>('POST', base, {
        body: { email, role },
        idempotencyKey: crypto.randomUUID(),
      });
      setEmail('');
      return `Invited ${email} as ${role}; the e-mail is ${data.email_delivery}.`;
    });
  };
  const resend = (i: Invitation) =>
    act(async () => {
      await api.call('POST', `${base}/${i.id}/resend`);
      return `A new link was sent to ${i.email}.`;
    });
  const revoke = (i: Invitation) => {
    if (!confirmed(`Revoke the invitation of ${i.email}? Its link stops working.`)) return;
    void act(async () => {
      await api.call('DELETE', `${base}/${i.id}`);
      return `The invitation of ${i.email} was revoked.`;
    });
  };

  return (
    <Page title="Invitations">
      <form onSubmit={invite} class="inline-form">
        <label>
          E-mail address
          <input type="email" required maxLength={254} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {grantable(organization.role).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Invite
        </button>
      </form>
      <ProblemAlert problem={invitations.problem ?? problem} />
      <p role="status">{notice}</p>
      <table>
        <caption>Invitations, newest first</caption>
        <thead>
          <tr>
            <th scope="col">E-mail</th>
            <th scope="col">Role</th>
            <th scope="col">State</th>
            <th scope="col">Sent</th>
            <th scope="col">Expires</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {invitations.items.map((i) => (
            <tr key={i.id}>
              <td>{i.email}</td>
              <td>{i.role}</td>
              <td>{i.state}</td>
              <td>{when(i.created_at)}</td>
              <td>{when(i.expires_at)}</td>
              <td>
                {i.state === 'pending' && (
                  <>
                    <button type="button" onClick={() => void resend(i)} disabled={busy}>
                      Resend to {i.email}
                    </button>{' '}
                    <button type="button" class="danger" onClick={() => revoke(i)} disabled={busy}>
                      Revoke {i.email}
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={invitations} label="More invitations" />
    </Page>
  );
}
