// Two finished evaluations compared (two versions of a playbook, or the Brain's search before and
// after a change): what each evaluated, each metric before and after with its change, and the
// cases whose scores changed (improved, regressed), with the rank of the first expected memory in
// each and, for playbooks, the run that answered the case in each.
import { useSession } from '../session.tsx';
import { ProblemAlert, useResource } from '../ui.tsx';
import { RunLink, Subject } from './evaluation-subject.tsx';
import { type Evaluation, figure, nameOf } from './evaluations.tsx';

interface Comparison {
  base_evaluation_id: string;
  cases_compared: number;
  metrics: { name: string; base: number; head: number; delta: number }[];
  changed_cases: {
    case_id: string;
    input: string;
    change: string;
    base_rank: number | null;
    head_rank: number | null;
    base_run_id: string | null;
    head_run_id: string | null;
  }[];
}

const signed = (v: number) => `${v > 0 ? '+' : ''}${v.toFixed(3)}`;

export function EvaluationComparison({ path, base, head }: { path: string; base: string; head: Evaluation }) {
  const { settings, organization } = useSession();
  const compared = useResource<Comparison>(`${path}/comparison?base=${encodeURIComponent(base)}`);
  const before = useResource<Evaluation>(`/organizations/${organization.organization_id}/evaluations/${encodeURIComponent(base)}`);
  const c = compared.data;
  const runs = head.subject.type === 'playbook' || before.data?.subject.type === 'playbook';
  return (
    <section aria-labelledby="comparison-title">
      <h2 id="comparison-title">Compared with {before.data ? nameOf(before.data) : base}</h2>
      <dl class="facts" data-testid="compared-subjects">
        <dt>
          Before: <a href={`${settings.basePath}/evaluations/${base}`}>{before.data ? nameOf(before.data) : base}</a>
        </dt>
        <dd>{before.data && <Subject subject={before.data.subject} />}</dd>
        <dt>After: {nameOf(head)}</dt>
        <dd>
          <Subject subject={head.subject} />
        </dd>
      </dl>
      <ProblemAlert problem={compared.problem ?? before.problem} />
      {c && (
        <>
          <table>
            <caption>Metrics over {c.cases_compared} case(s) in both</caption>
            <thead>
              <tr>
                <th scope="col">Metric</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {c.metrics.map((m) => (
                <tr key={m.name}>
                  <th scope="row">{m.name}</th>
                  <td>{figure(m.base)}</td>
                  <td>{figure(m.head)}</td>
                  <td>{signed(m.delta)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table>
            <caption>Cases that changed</caption>
            <thead>
              <tr>
                <th scope="col">Query</th>
                <th scope="col">Change</th>
                <th scope="col">Rank before</th>
                <th scope="col">Rank after</th>
                {runs && <th scope="col">Run before</th>}
                {runs && <th scope="col">Run after</th>}
              </tr>
            </thead>
            <tbody>
              {c.changed_cases.map((x) => (
                <tr key={x.case_id}>
                  <td>{x.input}</td>
                  <td>{x.change}</td>
                  <td>{x.base_rank ?? 'not found'}</td>
                  <td>{x.head_rank ?? 'not found'}</td>
                  {runs && (
                    <td>
                      <RunLink id={x.base_run_id} />
                    </td>
                  )}
                  {runs && (
                    <td>
                      <RunLink id={x.head_run_id} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          {c.changed_cases.length === 0 && <p>No case changed.</p>}
        </>
      )}
    </section>
  );
}
