// Your profile (/users/me): the account, changing one's name (conditional on the ETag), one's
// password (profile-password.tsx) and e-mail address (profile-email.tsx), the organizations one
// belongs to, a new one (acting for it is switching organization), and deleting one's account
// (profile-delete.tsx, loaded on demand: it is below the first screen).
import { useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { deferred } from '../deferred.tsx';
import { useSession } from '../session.tsx';
import { Page, ProblemAlert, toProblem, useAction, when } from '../ui.tsx';
import { ChangeEmail } from './profile-email.tsx';
import { ChangePassword } from './profile-password.tsx';

const DeleteAccount = deferred(() => import('./profile-delete.tsx').then((m) => m.DeleteAccount));

function NewOrganization() {
  const { api, reload } = useSession();
  const [name, setName] = useState('');
  const action = useAction(() => void reload());
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { data } = await api.call<{ name: string }>('POST', '/organizations', { body: { name }, idempotencyKey: crypto.randomUUID() });
      setName('');
      return `${data.name} was created, with you as its owner. Switch organization to act for it.`;
    });
  };
  return (
    <>
      <h2>A new organization</h2>
      <form onSubmit={create} class="inline-form">
        <label>
          Organization name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Create organization
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </>
  );
}

export function ProfilePage() {
  const { api, me, meEtag, memberships, reload } = useSession();
  const [name, setName] = useState(me.name);
  const [problem, setProblem] = useState<ProblemDocument>();
  const [notice, setNotice] = useState('');

  const save = async (e: Event) => {
    e.preventDefault();
    setProblem(undefined);
    setNotice('');
    try {
      await api.call('PATCH', '/users/me', { body: { name }, ifMatch: meEtag ?? undefined });
      await reload();
      setNotice('Your name was saved.');
    } catch (err) {
      setProblem(toProblem(err));
    }
  };

  return (
    <Page title="Your profile">
      <dl class="facts">
        <dt>E-mail address</dt>
        <dd>
          {me.email} {me.email_verified ? '(verified)' : '(not verified)'}
        </dd>
        <dt>User id</dt>
        <dd>
          <code>{me.id}</code>
        </dd>
      </dl>
      <form onSubmit={(e) => void save(e)} class="inline-form">
        <label>
          Your name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <button type="submit">Save</button>
      </form>
      <ProblemAlert problem={problem} />
      <p role="status">{notice}</p>
      <ChangePassword />
      <ChangeEmail />
      <h2>Your organizations</h2>
      <table>
        <caption>Organizations you belong to</caption>
        <thead>
          <tr>
            <th scope="col">Organization</th>
            <th scope="col">Role</th>
            <th scope="col">Joined</th>
          </tr>
        </thead>
        <tbody>
          {memberships.map((m) => (
            <tr key={m.organization_id}>
              <td>
                {m.organization_name}
                {m.current && ' (current)'}
              </td>
              <td>{m.role}</td>
              <td>{when(m.joined_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <NewOrganization />
      <DeleteAccount />
    </Page>
  );
}
