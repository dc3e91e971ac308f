// The audit log, newest first, read page by page with the API's cursor; filtered by action
// and outcome on the server; exported, with the same filters, as a JSON Lines file.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

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
  const { api, organization } = useSession();
  const [action, setAction] = useState('');
  const [outcome, setOutcome] = useState('');
  const [filters, setFilters] = useState({ action: '', outcome: '' });
  const query = new URLSearchParams({ page_size: String(PAGE_SIZE) });
  if (filters.action) query.set('action', filters.action);
  if (filters.outcome) query.set('outcome', filters.outcome);
  const path = `/organizations/${organization.organization_id}/audit-events`;
  const events = usePaged<AuditEvent>(`${path}?${query}`, 'events');
  const exporting = useAction(() => {});
  const exportAll = () =>
    void exporting.run(async () => {
      const filtered = new URLSearchParams(query);
      filtered.delete('page_size');
      const name = `audit-${organization.organization_id}.jsonl`;
      // The download helper loads with the first export, not with the screen.
      const { downloadFile } = await import('../download.ts');
      const bytes = await downloadFile(api, `${path}/export?${filtered}`, name, 'application/jsonl');
      return `Saved ${name} (${bytes} bytes).`;
    });

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
        <button type="button" onClick={exportAll} disabled={exporting.busy}>
          Export as JSON Lines
        </button>
      </form>
      <ProblemAlert problem={events.problem ?? exporting.problem} />
      <p role="status">{exporting.notice}</p>
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
