// Deleting one's own account, for good: the API takes it only with the account's e-mail address
// typed as confirmation, and refuses it (409) while the user is the only owner of an organization,
// which the page shows as the API wrote it. Once deleted, every session and grant is gone.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { confirmed, ProblemAlert, useAction } from '../ui.tsx';

export function DeleteAccount() {
  const { api, me } = useSession();
  const [typed, setTyped] = useState('');
  const [gone, setGone] = useState(false);
  const action = useAction(() => setGone(true));
  const remove = (e: Event) => {
    e.preventDefault();
    if (!confirmed(`Delete your account ${me.email}, with your memberships and sign-ins, for good?`)) return;
    void action.run(async () => {
      const { data } = await api.call<{ organizations_left: string[] }>('DELETE', '/users/me', { body: { confirm: typed } });
      return `Your account is deleted; you left ${data.organizations_left.length} organization(s) and are signed out everywhere.`;
    });
  };
  return (
    <section aria-labelledby="delete-account-title" class="danger-zone">
      <h2 id="delete-account-title">Delete your account</h2>
      <p>
        Hand over or delete the organizations you alone own first. Type your e-mail address, <code>{me.email}</code>, to confirm.
      </p>
      <form onSubmit={remove} class="inline-form">
        <label>
          Your e-mail address, to confirm
          <input type="email" required autocomplete="off" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <button type="submit" class="danger" disabled={action.busy || gone}>
          Delete my account
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </section>
  );
}
