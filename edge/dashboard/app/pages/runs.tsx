// Runs: every run of the organization's investigations, newest first, by status, each opening on
// its own page (run.tsx): the run followed live, and its investigation. Evaluation results of a
// playbook link here, to the run that answered the case.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, usePaged, when } from '../ui.tsx';
import type { Run } from './run-card.tsx';

const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out'] as const;

export function RunsPage() {
  const { settings, organization } = useSession();
  const [status, setStatus] = useState('');
  const runs = usePaged<Run>(
    `/organizations/${organization.organization_id}/runs?page_size=25${status ? `&status=${status}` : ''}`,
    'runs',
  );
  return (
    <Page title="Runs">
      <div class="inline-form">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ProblemAlert problem={runs.problem} />
      <table>
        <caption>Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Executor</th>
            <th scope="col">Steps</th>
            <th scope="col">Started</th>
            <th scope="col">Investigation</th>
          </tr>
        </thead>
        <tbody>
          {runs.items.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={`${settings.basePath}/runs/${r.id}`}>{r.id}</a>
              </td>
              <td>{r.status}</td>
              <td>{r.executor}</td>
              <td>{r.step_count}</td>
              <td>{when(r.created_at)}</td>
              <td>
                <a href={`${settings.basePath}/investigations/${r.thread_id}`}>Investigation of {r.id}</a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!runs.loading && runs.items.length === 0 && !runs.problem && <p>No runs.</p>}
      <MoreButton paged={runs} label="Older runs" />
    </Page>
  );
}
