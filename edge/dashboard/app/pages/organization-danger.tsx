// What only an owner does to the organization, each confirmed: handing the ownership to another
// member (who becomes an owner; the caller an admin), and deleting it, which the API takes only
// with the organization's slug (or id) typed as its confirmation. A deleted organization's tokens
// stop working, so the page then offers to sign in for another one.
import { useState } from 'preact/hooks';
import { signIn } from '../auth.ts';
import { useSession } from '../session.tsx';
import { type Action, confirmed, ProblemAlert, useAction, usePaged } from '../ui.tsx';
import { type Member, personOf } from './members.tsx';
import type { Organization } from './organization.tsx';

/** `action` is the page's: its outcome outlives this form, which goes once the caller is no longer an owner. */
export function TransferOwnership({ path, action }: { path: string; action: Action }) {
  const { api, me, reload } = useSession();
  const members = usePaged<Member>(`${path}/members?page_size=100`, 'members');
  const [chosen, setChosen] = useState('');
  const others = members.items.filter((m) => m.user_id !== me.id);
  const transfer = (e: Event) => {
    e.preventDefault();
    const to = others.find((m) => m.user_id === chosen);
    if (!to || !confirmed(`Hand the organization to ${personOf(to)}? They become an owner, and you an admin.`)) return;
    void action.run(async () => {
      await api.call('POST', `${path}/transfer-ownership`, { body: { user_id: to.user_id } });
      // The header shows the caller's role: read the memberships again.
      await reload();
      return `${personOf(to)} is now an owner; you are an admin.`;
    });
  };
  return (
    <section aria-labelledby="transfer-title">
      <h2 id="transfer-title">Hand over ownership</h2>
      <form onSubmit={transfer} class="inline-form">
        <label>
          New owner
          <select required value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
            <option value="">Choose a member</option>
            {others.map((m) => (
              <option key={m.user_id} value={m.user_id}>
                {personOf(m)} ({m.role})
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="danger" disabled={!chosen || action.busy}>
          Hand over ownership
        </button>
      </form>
      <ProblemAlert problem={members.problem} />
    </section>
  );
}

export function DeleteOrganization({ path, organization: o }: { path: string; organization: Organization }) {
  const { api, settings } = useSession();
  const [typed, setTyped] = useState('');
  const [deleted, setDeleted] = useState(false);
  const action = useAction(() => setDeleted(true));
  const expected = o.slug ?? o.id;
  const remove = (e: Event) => {
    e.preventDefault();
    if (!confirmed(`Delete ${o.name} and everything it holds (memories, members, keys, its audit log)? This cannot be undone.`)) return;
    void action.run(async () => {
      await api.call('DELETE', `${path}?confirm=${encodeURIComponent(typed)}`);
      return `${o.name} is deleted: its data is being purged, and these sign-in tokens no longer act for anything.`;
    });
  };
  return (
    <section aria-labelledby="delete-org-title" class="danger-zone">
      <h2 id="delete-org-title">Delete the organization</h2>
      <p>
        Deleting <strong>{o.name}</strong> removes its memories, graph, members, teams, keys, clients, subscription and audit log for good.
        Type <code>{expected}</code> to confirm.
      </p>
      <form onSubmit={remove} class="inline-form">
        <label>
          Type the organization's slug to confirm
          <input required autocomplete="off" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        </label>
        <button type="submit" class="danger" disabled={typed !== expected || action.busy || deleted}>
          Delete the organization for good
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
      {deleted && (
        <button type="button" onClick={() => void signIn(settings, settings.basePath)}>
          Sign in for another organization
        </button>
      )}
    </section>
  );
}
