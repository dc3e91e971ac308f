// Two finished evaluations compared: each metric before and after with its change, and the cases
// whose scores changed (improved, regressed), with the rank of the first expected memory in each.
import { useSession } from '../session.tsx';
import { ProblemAlert, useResource } from '../ui.tsx';
import { figure } from './evaluations.tsx';

interface Comparison {
  base_evaluation_id: string;
  cases_compared: number;
  metrics: { name: string; base: number; head: number; delta: number }[];
  changed_cases: { case_id: string; input: string; change: string; base_rank: number | null; head_rank: number | null }[];
}

const signed = (v: number) => `${v > 0 ? '+' : ''}${v.toFixed(3)}`;

export function EvaluationComparison({ path, base }: { path: string; base: string }) {
  const { settings } = useSession();
  const compared = useResource<Comparison>(`${path}/comparison?base=${encodeURIComponent(base)}`);
  const c = compared.data;
  return (
    <section aria-labelledby="comparison-title">
      <h2 id="comparison-title">Compared with {base}</h2>
      <p>
        <a href={`${settings.basePath}/evaluations/${base}`}>The earlier evaluation</a>
      </p>
      <ProblemAlert problem={compared.problem} />
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
              </tr>
            </thead>
            <tbody>
              {c.changed_cases.map((x) => (
                <tr key={x.case_id}>
                  <td>{x.input}</td>
                  <td>{x.change}</td>
                  <td>{x.base_rank ?? 'not found'}</td>
                  <td>{x.head_rank ?? 'not found'}</td>
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
