// Evaluation datasets: the questions the Brain should answer well, each case with what it should
// find. Everyone lists them; members and above create one. Each opens on its own page
// (evaluation-dataset.tsx) with its cases, their JSON Lines import, and evaluations of it.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

export interface Dataset {
  id: string;
  name: string;
  description: string;
  case_count: number;
  created_by: string;
  created_at: string | null;
  updated_at: string | null;
}

function CreateDataset({ base }: { base: string }) {
  const { api, settings } = useSession();
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction(() => {});
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { name, ...(description ? { description } : {}) };
      const { data } = await api.call<Dataset>('POST', base, { body, idempotencyKey: crypto.randomUUID() });
      route(`${settings.basePath}/evaluation-datasets/${data.id}`);
      return `Dataset ${data.name} created.`;
    });
  };
  return (
    <>
      <form onSubmit={create} class="inline-form">
        <label>
          Dataset name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input maxLength={2000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Create dataset
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </>
  );
}

export function EvaluationDatasetsPage() {
  const { settings, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/evaluation-datasets`;
  const datasets = usePaged<Dataset>(base, 'datasets');
  return (
    <Page title="Evaluation datasets">
      <p>
        Cases the Brain's search is scored on; <a href={`${settings.basePath}/evaluations`}>evaluations</a> score it and compare runs.
      </p>
      {can(organization.role, 'createEvaluationDataset') && <CreateDataset base={base} />}
      <ProblemAlert problem={datasets.problem} />
      <table>
        <caption>Evaluation datasets, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Dataset</th>
            <th scope="col">Cases</th>
            <th scope="col">Changed</th>
          </tr>
        </thead>
        <tbody>
          {datasets.items.map((d) => (
            <tr key={d.id}>
              <td>
                <a href={`${settings.basePath}/evaluation-datasets/${d.id}`}>{d.name}</a>
                {d.description && <span class="meta"> {d.description}</span>}
              </td>
              <td>{d.case_count}</td>
              <td>{when(d.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!datasets.loading && datasets.items.length === 0 && !datasets.problem && <p>No datasets yet.</p>}
      <MoreButton paged={datasets} label="More datasets" />
    </Page>
  );
}
