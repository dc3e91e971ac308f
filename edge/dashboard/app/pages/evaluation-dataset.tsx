// One evaluation dataset: its cases in the order added (members add one, import many as JSON
// Lines, delete one; everyone exports them as a file), renaming it (If-Match), an evaluation of it
// started (evaluation-start.tsx; it opens on its own page, following its progress), its
// evaluations so far, and deleting it (confirmed; evaluations keep their results).
import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource } from '../ui.tsx';
import { AddCase, ExportCases, ImportCases } from './evaluation-cases.tsx';
import type { Dataset } from './evaluation-datasets.tsx';
import { StartEvaluation } from './evaluation-start.tsx';
import { EvaluationList } from './evaluations.tsx';

interface Case {
  id: string;
  seq: number;
  input: string;
  namespace: string | null;
  expected_memories: { namespace: string; key: string }[];
  expected_answer: string;
  answer_pattern: string;
}

function expectation(c: Case): string {
  const parts = [
    ...c.expected_memories.map((m) => `${m.namespace}/${m.key}`),
    ...(c.expected_answer ? [`answer “${c.expected_answer}”`] : []),
    ...(c.answer_pattern ? [`matches /${c.answer_pattern}/`] : []),
  ];
  return parts.join('; ');
}

function Cases({ path, version, mayWrite, changed }: { path: string; version: number; mayWrite: boolean; changed: () => void }) {
  const { api } = useSession();
  const cases = usePaged<Case>(`${path}/cases?page_size=50`, 'cases', version);
  const action = useAction(changed);
  const remove = (c: Case) => {
    if (!confirmed(`Delete case ${c.seq} (“${c.input}”)?`)) return;
    void action.run(async () => {
      await api.call('DELETE', `${path}/cases/${c.id}`);
      return `Case ${c.seq} deleted.`;
    });
  };
  return (
    <>
      <ProblemAlert problem={cases.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      <table>
        <caption>Cases, in the order added</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Query</th>
            <th scope="col">Searched</th>
            <th scope="col">Expected</th>
            {mayWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {cases.items.map((c) => (
            <tr key={c.id}>
              <td>{c.seq}</td>
              <td>{c.input}</td>
              <td>{c.namespace ?? 'both'}</td>
              <td>{expectation(c)}</td>
              {mayWrite && (
                <td>
                  <button type="button" class="danger" onClick={() => remove(c)}>
                    Delete case {c.seq}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {!cases.loading && cases.items.length === 0 && !cases.problem && <p>No cases yet.</p>}
      <MoreButton paged={cases} label="More cases" />
    </>
  );
}

/** The dataset's name and description, changed at the version read (If-Match). */
function RenameDataset({ path, dataset, etag, saved }: { path: string; dataset: Dataset; etag: string | null; saved: () => void }) {
  const { api } = useSession();
  const [name, setName] = useState(dataset.name);
  const [description, setDescription] = useState(dataset.description);
  const action = useAction(saved);
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { data } = await api.call<Dataset>('PATCH', path, { body: { name, description }, ifMatch: etag ?? undefined });
      return `Dataset saved as ${data.name}.`;
    });
  };
  return (
    <details>
      <summary>Rename the dataset</summary>
      <form onSubmit={save} class="stacked-form">
        <label>
          New name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          New description
          <input maxLength={2000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Save the name
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function EvaluationDatasetPage() {
  const { api, settings, organization } = useSession();
  const { params } = useRoute();
  const { route } = useLocation();
  const path = `/organizations/${organization.organization_id}/evaluation-datasets/${params.id}`;
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
  const { data: dataset, etag, problem } = useResource<Dataset>(path, version);
  const action = useAction(() => {});
  const mayWrite = can(organization.role, 'addEvaluationCase');
  const remove = () => {
    if (!confirmed(`Delete the dataset ${dataset?.name} and its cases? Its evaluations keep their results.`)) return;
    void action.run(async () => {
      await api.call('DELETE', path);
      route(`${settings.basePath}/evaluation-datasets`);
      return 'Dataset deleted.';
    });
  };
  return (
    <Page title={dataset ? `Dataset ${dataset.name}` : 'Evaluation dataset'}>
      <p>
        <a href={`${settings.basePath}/evaluation-datasets`}>All datasets</a>
      </p>
      <ProblemAlert problem={problem ?? action.problem} />
      {dataset && (
        <>
          <p>
            {dataset.description} {dataset.case_count} case(s).
          </p>
          {can(organization.role, 'updateEvaluationDataset') && (
            <RenameDataset key={etag} path={path} dataset={dataset} etag={etag} saved={changed} />
          )}
          {mayWrite && (
            <>
              <AddCase path={path} after={changed} />
              <ImportCases path={path} after={changed} />
            </>
          )}
          {can(organization.role, 'exportEvaluationCases') && dataset.case_count > 0 && <ExportCases path={path} datasetId={dataset.id} />}
          {can(organization.role, 'createEvaluation') && dataset.case_count > 0 && <StartEvaluation datasetId={dataset.id} />}
          <Cases path={path} version={version} mayWrite={mayWrite} changed={changed} />
          <h2>Evaluations of {dataset.name}</h2>
          <EvaluationList datasetId={dataset.id} />
          {can(organization.role, 'deleteEvaluationDataset') && (
            <button type="button" class="danger" onClick={remove}>
              Delete the dataset
            </button>
          )}
        </>
      )}
    </Page>
  );
}
