// Investigations: the organization's threads, newest activity first, filtered by status; members
// and above open one with a first message. Each opens on its own page (investigation.tsx) with
// its messages and runs.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

export interface Thread {
  id: string;
  title: string;
  status: 'open' | 'resolved' | 'archived';
  created_by: string;
  message_count: number;
  created_at: string | null;
  updated_at: string | null;
}

function NewThread({ path }: { path: string }) {
  const { api, settings } = useSession();
  const { route } = useLocation();
  const [title, setTitle] = useState('');
  const [message, setMessage] = useState('');
  const action = useAction(() => undefined);
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { title, ...(message.trim() ? { message } : {}) };
      const { data } = await api.call<Thread>('POST', path, { body, idempotencyKey: crypto.randomUUID() });
      route(`${settings.basePath}/investigations/${data.id}`);
      return `Investigation ${data.title} opened.`;
    });
  };
  return (
    <details>
      <summary>Open an investigation</summary>
      <form onSubmit={create} class="stacked-form">
        <label>
          Title
          <input required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
        </label>
        <label>
          First message
          <textarea rows={4} maxLength={100000} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Open the investigation
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function InvestigationsPage() {
  const { settings, organization } = useSession();
  const path = `/organizations/${organization.organization_id}/threads`;
  const [status, setStatus] = useState('');
  const threads = usePaged<Thread>(status ? `${path}?status=${status}` : path, 'threads');
  return (
    <Page title="Investigations">
      {can(organization.role, 'createThread') && <NewThread path={path} />}
      <div class="inline-form">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="open">open</option>
            <option value="resolved">resolved</option>
            <option value="archived">archived</option>
          </select>
        </label>
      </div>
      <ProblemAlert problem={threads.problem} />
      <table>
        <caption>Investigations of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">Status</th>
            <th scope="col">Messages</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {threads.items.map((t) => (
            <tr key={t.id}>
              <td>
                <a href={`${settings.basePath}/investigations/${t.id}`}>{t.title}</a>
              </td>
              <td>{t.status}</td>
              <td>{t.message_count}</td>
              <td>{when(t.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!threads.loading && threads.items.length === 0 && !threads.problem && <p>No investigations.</p>}
      <MoreButton paged={threads} label="More investigations" />
    </Page>
  );
}
