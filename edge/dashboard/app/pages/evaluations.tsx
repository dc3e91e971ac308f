// Evaluations: each a dataset scored against the Brain's search or a version of a playbook, newest
// first, with what was evaluated, its progress and headline metrics; two finished ones compared
// (this one against a base, metric by metric and case by case: two versions of a playbook, say) on
// the evaluation's page. Started from a dataset's page.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, usePaged, when } from '../ui.tsx';

export interface Evaluation {
  id: string;
  dataset_id: string;
  /** What was evaluated: `type` names the kind, the other fields are the kind's own. */
  subject: { type: string } & Record<string, unknown>;
  evaluators: string[];
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  label: string;
  case_total: number;
  cases_scored: number;
  metrics: { name: string; value: number; cases: number }[];
  error: string | null;
  attempt: number;
  created_at: string | null;
  started_at: string | null;
  finished_at: string | null;
}

export const metric = (e: Evaluation, name: string) => e.metrics.find((m) => m.name === name)?.value;
export const figure = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(3));
export const nameOf = (e: Evaluation) => e.label || e.id;

/** The subject in words: the Brain's search with its results per case, a playbook's version, else its type and fields. */
export function subjectText(s: Evaluation['subject']): string {
  if (s.type === 'brain_search') return `the Brain's search, ${s.limit} results per case`;
  if (s.type === 'playbook') return `the playbook ${s.playbook_id}, ${playbookDetails(s)}`;
  const { type, ...fields } = s;
  return `${type} ${JSON.stringify(fields)}`;
}

/** A playbook subject's version, the input each case fills, and each run's time limit. */
export function playbookDetails(s: Evaluation['subject']): string {
  return `version ${s.version}${s.input_name ? `, each case's input as ${s.input_name}` : ''}${s.alert_input_name ? `, its alert as ${s.alert_input_name}` : ''}, at most ${s.timeout_seconds} s a run`;
}

/** What was evaluated, in a few words for a list. */
export const subjectShort = (s: Evaluation['subject']) => (s.type === 'playbook' ? `playbook v${s.version}` : "the Brain's search");

/** Evaluations, newest first, of one dataset or all. */
export function EvaluationList({ datasetId }: { datasetId?: string }) {
  const { settings, organization } = useSession();
  const query = datasetId ? `?dataset_id=${datasetId}` : '';
  const evaluations = usePaged<Evaluation>(`/organizations/${organization.organization_id}/evaluations${query}`, 'evaluations');
  return (
    <>
      <ProblemAlert problem={evaluations.problem} />
      <table>
        <caption>Evaluations, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Evaluation</th>
            <th scope="col">Evaluated</th>
            <th scope="col">Status</th>
            <th scope="col">Cases scored</th>
            <th scope="col">recall@5</th>
            <th scope="col">MRR</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {evaluations.items.map((e) => (
            <tr key={e.id}>
              <td>
                <a href={`${settings.basePath}/evaluations/${e.id}`}>{nameOf(e)}</a>
              </td>
              <td>{subjectShort(e.subject)}</td>
              <td>{e.status}</td>
              <td>
                {e.cases_scored} of {e.case_total}
              </td>
              <td>{figure(metric(e, 'recall@5'))}</td>
              <td>{figure(metric(e, 'mrr'))}</td>
              <td>{when(e.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!evaluations.loading && evaluations.items.length === 0 && !evaluations.problem && <p>No evaluations yet.</p>}
      <MoreButton paged={evaluations} label="Older evaluations" />
    </>
  );
}

function Compare() {
  const { settings, organization } = useSession();
  const { route } = useLocation();
  const finished = usePaged<Evaluation>(`/organizations/${organization.organization_id}/evaluations?page_size=100`, 'evaluations');
  const done = finished.items.filter((e) => e.status === 'succeeded');
  const [base, setBase] = useState('');
  const [head, setHead] = useState('');
  const option = (e: Evaluation) => (
    <option key={e.id} value={e.id}>
      {nameOf(e)}, {subjectShort(e.subject)} ({when(e.finished_at)})
    </option>
  );
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        route(`${settings.basePath}/evaluations/${head}?base=${base}`);
      }}
    >
      <label for="compare-base">Before</label>
      <select id="compare-base" required value={base} onChange={(e) => setBase(e.currentTarget.value)}>
        <option value="">pick one</option>
        {done.map(option)}
      </select>
      <label for="compare-head">After</label>
      <select id="compare-head" required value={head} onChange={(e) => setHead(e.currentTarget.value)}>
        <option value="">pick one</option>
        {done.map(option)}
      </select>
      <button type="submit" disabled={!base || !head || base === head}>
        Compare
      </button>
    </form>
  );
}

export function EvaluationsPage() {
  const { settings } = useSession();
  return (
    <Page title="Evaluations">
      <p>
        Start one from a <a href={`${settings.basePath}/evaluation-datasets`}>dataset</a>. Compare two finished ones:
      </p>
      <Compare />
      <EvaluationList />
    </Page>
  );
}
