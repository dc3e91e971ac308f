// The audit log, newest first, read page by page with the API's cursor; filtered by action
// and outcome on the server.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, usePaged, when } from '../ui.tsx';

interface AuditEvent {
  id: string;
  actor: { kind: string; id: string };
  action: string;
  target: string;
  status: number;
  outcome: 'success' | 'denied' | 'failed';
  created_at: string | null;
}

const PAGE_SIZE = 25;

export function AuditPage() {
  const { organization } = useSession();
  const [action, setAction] = useState('');
  const [outcome, setOutcome] = useState('');
  const [filters, setFilters] = useState({ action: '', outcome: '' });
  const query = new URLSearchParams({ page_size: String(PAGE_SIZE) });
  if (filters.action) query.set('action', filters.action);
  if (filters.outcome) query.set('outcome', filters.outcome);
  const events = usePaged<AuditEvent>(`/organizations/${organization.organization_id}/audit-events?${query}`, 'events');

  return (
    <Page title="Audit log">
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters({ action: action.trim(), outcome });
        }}
      >
        <label>
          Action
          <input value={action} placeholder="createApiKey" onInput={(e) => setAction(e.currentTarget.value)} />
        </label>
        <label>
          Outcome
          <select value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="denied">denied</option>
            <option value="failed">failed</option>
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <ProblemAlert problem={events.problem} />
      <table>
        <caption>Changes to {organization.organization_name}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Outcome</th>
          </tr>
        </thead>
        <tbody>
          {events.items.map((e) => (
            <tr key={e.id}>
              <td>{when(e.created_at)}</td>
              <td>
                {e.actor.kind} <code>{e.actor.id}</code>
              </td>
              <td>{e.action}</td>
              <td>
                <code>{e.target}</code>
              </td>
              <td>
                {e.outcome} ({e.status})
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!events.loading && events.items.length === 0 && !events.problem && <p>No events.</p>}
      <MoreButton paged={events} label="Older events" />
    </Page>
  );
}
