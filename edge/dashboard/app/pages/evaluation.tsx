// One evaluation: what was evaluated (the Brain's search, or a playbook's version, linked), its
// progress (read again every two seconds while queued or running), its metrics once finished, its
// results case by case (for a playbook, each case's answer and the run that gave it, linked), and,
// with `?base=`, how it compares with that earlier evaluation (each metric before, after and the
// change; the cases that improved or regressed, with their runs).
import { useEffect, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, usePaged, useResource, when } from '../ui.tsx';
import { EvaluationComparison } from './evaluation-comparison.tsx';
import { RunLink, Subject } from './evaluation-subject.tsx';
import { type Evaluation, figure, nameOf } from './evaluations.tsx';

const LIVE_MS = 2_000;

interface Result {
  case_id: string;
  seq: number;
  input: string;
  found: { namespace: string; key: string }[];
  first_relevant_rank: number | null;
  scores: { name: string; value: number; passed: boolean }[];
  answer: string;
  error: string | null;
  run_id: string | null;
}

function Results({ path, runs }: { path: string; runs: boolean }) {
  const results = usePaged<Result>(`${path}/results?page_size=50`, 'results');
  return (
    <>
      <ProblemAlert problem={results.problem} />
      <table>
        <caption>Results, case by case</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Query</th>
            <th scope="col">First expected memory at</th>
            <th scope="col">Scores</th>
            {runs && <th scope="col">Answer</th>}
            {runs && <th scope="col">Run</th>}
          </tr>
        </thead>
        <tbody>
          {results.items.map((r) => (
            <tr key={r.case_id}>
              <td>{r.seq}</td>
              <td>{r.input}</td>
              <td>{r.first_relevant_rank ?? 'not found'}</td>
              <td>{r.error ?? r.scores.map((s) => `${s.name} ${figure(s.value)}${s.passed ? '' : ' (failed)'}`).join(', ')}</td>
              {runs && <td class="content">{r.answer}</td>}
              {runs && (
                <td>
                  <RunLink id={r.run_id} />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={results} label="More results" />
    </>
  );
}

function Progress({ evaluation: e }: { evaluation: Evaluation }) {
  return (
    <dl class="facts">
      <dt>Status</dt>
      <dd data-testid="evaluation-status">{e.status}</dd>
      <dt>Progress</dt>
      <dd>
        <progress value={e.cases_scored} max={Math.max(1, e.case_total)} aria-label="Cases scored" /> {e.cases_scored} of {e.case_total}{' '}
        cases
      </dd>
      <dt>Evaluated</dt>
      <dd>
        <Subject subject={e.subject} />
      </dd>
      <dt>Evaluators</dt>
      <dd>{e.evaluators.join(', ')}</dd>
      <dt>Started</dt>
      <dd>{when(e.started_at ?? e.created_at)}</dd>
      {e.error && (
        <>
          <dt>Error</dt>
          <dd>{e.error}</dd>
        </>
      )}
    </dl>
  );
}

export function EvaluationPage() {
  const { settings, organization } = useSession();
  const { params } = useRoute();
  const { query } = useLocation();
  const base = `/organizations/${organization.organization_id}/evaluations`;
  const path = `${base}/${params.id}`;
  const [tick, setTick] = useState(0);
  const { data: e, problem } = useResource<Evaluation>(path, tick);
  const going = e?.status === 'queued' || e?.status === 'running';
  useEffect(() => {
    if (!going) return;
    const timer = setInterval(() => setTick((t) => t + 1), LIVE_MS);
    return () => clearInterval(timer);
  }, [going]);
  return (
    <Page title={e ? `Evaluation ${nameOf(e)}` : 'Evaluation'}>
      <p>
        <a href={`${settings.basePath}/evaluations`}>All evaluations</a>
        {e && (
          <>
            {' · '}
            <a href={`${settings.basePath}/evaluation-datasets/${e.dataset_id}`}>Its dataset</a>
          </>
        )}
      </p>
      <ProblemAlert problem={problem} />
      {e && (
        <>
          <Progress evaluation={e} />
          {going && <p role="status">Following the evaluation…</p>}
          {e.metrics.length > 0 && (
            <table>
              <caption>Metrics</caption>
              <tbody>
                {e.metrics.map((m) => (
                  <tr key={m.name}>
                    <th scope="row">{m.name}</th>
                    <td>{figure(m.value)}</td>
                    <td>over {m.cases} case(s)</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {query.base && e.status === 'succeeded' && <EvaluationComparison path={path} base={query.base} head={e} />}
          {!going && <Results key={e.status} path={path} runs={e.subject.type === 'playbook'} />}
        </>
      )}
    </Page>
  );
}
