// Changing one's e-mail address from the profile page (POST /users/me/email-change): the API
// mails a link to the new address, and the account moves when it is opened; until then nothing
// changes, so the page only says where the link went. It needs the current password: an account
// without one is told to set one first (profile-password.tsx).
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';
import { CurrentPassword } from './profile-password.tsx';

export function ChangeEmail() {
  const { api, me } = useSession();
  const [newEmail, setNewEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction(() => undefined);
  const request = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { data } = await api.call<{ new_email: string }>('POST', '/users/me/email-change', {
        body: { new_email: newEmail, current_password: password },
      });
      setPassword('');
      return `We sent a link to ${data.new_email}. Open it within 24 hours to sign in with that address from then on.`;
    });
  };
  if (!me.has_password) {
    return (
      <section aria-labelledby="profile-email">
        <h2 id="profile-email">Change e-mail address</h2>
        <p>Your account signs in through an identity provider only: set a password above first, then change the address here.</p>
      </section>
    );
  }
  return (
    <section aria-labelledby="profile-email">
      <h2 id="profile-email">Change e-mail address</h2>
      <form onSubmit={request} class="inline-form">
        <label>
          New e-mail address
          <input
            type="email"
            required
            maxLength={254}
            autocomplete="email"
            value={newEmail}
            onInput={(e) => setNewEmail(e.currentTarget.value)}
          />
        </label>
        <CurrentPassword value={password} set={setPassword} />
        <button type="submit" disabled={action.busy}>
          Send the link
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </section>
  );
}
