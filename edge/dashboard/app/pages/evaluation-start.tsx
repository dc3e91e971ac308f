// Starting an evaluation of a dataset: what is evaluated (the subject), which evaluators score
// each case, and a label; it opens on its own page, following its progress.
//
// Subjects are a table: each kind names its `type` as the API does, its fields and how they make
// the subject's body: the Brain's search, or a version of a playbook (evaluation-playbook.tsx).
import type { FunctionComponent } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';
import { PLAYBOOK_INITIAL, PlaybookSubjectFields, playbookSubject } from './evaluation-playbook.tsx';

type Values = Record<string, string>;

interface SubjectKind {
  type: string;
  /** What "Evaluate …" names. */
  label: string;
  initial: Values;
  Fields: FunctionComponent<{ values: Values; set: (v: Values) => void }>;
  body(values: Values): Record<string, unknown>;
}

const SUBJECTS: SubjectKind[] = [
  {
    type: 'brain_search',
    label: "the Brain's search",
    initial: { limit: '10' },
    Fields: ({ values, set }) => (
      <label>
        Results per case
        <input
          type="number"
          min={1}
          max={50}
          required
          value={values.limit}
          onInput={(e) => set({ ...values, limit: e.currentTarget.value })}
        />
      </label>
    ),
    body: (v) => ({ type: 'brain_search', limit: Number(v.limit) }),
  },
  { type: 'playbook', label: 'a playbook', initial: PLAYBOOK_INITIAL, Fields: PlaybookSubjectFields, body: playbookSubject },
];

/** The API's evaluators, and what each scores; every one but the model's judge is on by default. */
const EVALUATORS = [
  { name: 'retrieval', what: 'finds the expected memories (recall@k, MRR)', on: true },
  { name: 'exact', what: 'answer equals the expected answer', on: true },
  { name: 'contains', what: 'answer contains the expected answer', on: true },
  { name: 'regex', what: 'answer matches the pattern', on: true },
  { name: 'llm_judge', what: "a model judges the answer (needs the platform's LLM)", on: false },
];

export function StartEvaluation({ datasetId }: { datasetId: string }) {
  const { api, settings, organization } = useSession();
  const { route } = useLocation();
  const [kind, setKind] = useState(SUBJECTS[0]);
  const [values, setValues] = useState<Values>(SUBJECTS[0].initial);
  const [evaluators, setEvaluators] = useState(EVALUATORS.filter((e) => e.on).map((e) => e.name));
  const [label, setLabel] = useState('');
  const action = useAction(() => {});
  const start = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { dataset_id: datasetId, subject: kind.body(values), evaluators, ...(label ? { label } : {}) };
      const { data } = await api.call<{ id: string }>('POST', `/organizations/${organization.organization_id}/evaluations`, {
        body,
        idempotencyKey: crypto.randomUUID(),
      });
      route(`${settings.basePath}/evaluations/${data.id}`);
      return 'Evaluation queued.';
    });
  };
  const choose = (type: string) => {
    const next = SUBJECTS.find((s) => s.type === type) ?? SUBJECTS[0];
    setKind(next);
    setValues(next.initial);
  };
  return (
    <details>
      <summary>Start an evaluation</summary>
      <form onSubmit={start} class="stacked-form">
        {SUBJECTS.length > 1 && (
          <label>
            What is evaluated
            <select value={kind.type} onChange={(e) => choose(e.currentTarget.value)}>
              {SUBJECTS.map((s) => (
                <option key={s.type} value={s.type}>
                  {s.label}
                </option>
              ))}
            </select>
          </label>
        )}
        <kind.Fields values={values} set={setValues} />
        <fieldset class="picks">
          <legend>Evaluators</legend>
          {EVALUATORS.map((ev) => (
            <label key={ev.name} title={ev.what}>
              <input
                type="checkbox"
                checked={evaluators.includes(ev.name)}
                onChange={(e) =>
                  setEvaluators(e.currentTarget.checked ? [...evaluators, ev.name] : evaluators.filter((n) => n !== ev.name))
                }
              />{' '}
              <code>{ev.name}</code>: {ev.what}
            </label>
          ))}
        </fieldset>
        <label>
          Evaluation label
          <input maxLength={200} value={label} onInput={(e) => setLabel(e.currentTarget.value)} placeholder="after re-indexing" />
        </label>
        <button type="submit" disabled={action.busy || evaluators.length === 0}>
          Evaluate {kind.label}
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
    </details>
  );
}
