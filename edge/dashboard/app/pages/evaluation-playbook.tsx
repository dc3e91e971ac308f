// Evaluating a playbook (the `playbook` subject of createEvaluation): which playbook and version
// (the one published now, or one pinned), which of the version's string inputs each case's input
// fills (or none: each case's input is then a JSON object of the inputs), which one the case's
// alert fills, and each run's time limit. Each case is then a run of that version.
import { ProblemAlert, usePaged, useResource } from '../ui.tsx';
import { useSession } from '../session.tsx';
import type { DeclaredInput } from './playbook-inputs.tsx';
import type { Playbook } from './playbooks.tsx';

type Values = Record<string, string>;

export const PLAYBOOK_INITIAL: Values = { playbook_id: '', version: '', input_name: '', alert_input_name: '', timeout_seconds: '' };

/** The subject as the API takes it: fields left empty take the API's defaults. */
export function playbookSubject(v: Values): Record<string, unknown> {
  return {
    type: 'playbook',
    playbook_id: v.playbook_id,
    ...(v.version ? { version: Number(v.version) } : {}),
    ...(v.input_name ? { input_name: v.input_name } : {}),
    ...(v.alert_input_name ? { alert_input_name: v.alert_input_name } : {}),
    ...(v.timeout_seconds ? { timeout_seconds: Number(v.timeout_seconds) } : {}),
  };
}

function InputChoice({
  label,
  none,
  value,
  inputs,
  set,
}: {
  label: string;
  none: string;
  value: string;
  inputs: string[];
  set: (v: string) => void;
}) {
  return (
    <label>
      {label}
      <select value={value} onChange={(e) => set(e.currentTarget.value)}>
        <option value="">{none}</option>
        {inputs.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function PlaybookSubjectFields({ values, set }: { values: Values; set: (v: Values) => void }) {
  const { organization } = useSession();
  const base = `/organizations/${organization.organization_id}/playbooks`;
  const playbooks = usePaged<Playbook>(`${base}?page_size=100`, 'playbooks');
  const chosen = playbooks.items.find((p) => p.id === values.playbook_id);
  const version = values.version || String(chosen?.published_version ?? '');
  const doc = useResource<{ document: { inputs?: DeclaredInput[] } }>(
    chosen && version ? `${base}/${chosen.id}/versions/${version}` : null,
  );
  const strings = (doc.data?.document.inputs ?? []).filter((i) => i.type === 'string').map((i) => i.name);
  const change = (field: string) => (value: string) => set({ ...values, [field]: value });
  return (
    <fieldset class="group">
      <legend>The playbook evaluated</legend>
      <label>
        Playbook
        <select required value={values.playbook_id} onChange={(e) => set({ ...PLAYBOOK_INITIAL, playbook_id: e.currentTarget.value })}>
          <option value="">choose one</option>
          {playbooks.items.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      {chosen && (
        <label>
          Playbook version
          <select
            value={values.version}
            onChange={(e) => set({ ...values, version: e.currentTarget.value, input_name: '', alert_input_name: '' })}
          >
            <option value="">
              the one published now{chosen.published_version === null ? ' (none yet)' : ` (${chosen.published_version})`}
            </option>
            {Array.from({ length: chosen.latest_version }, (_, i) => chosen.latest_version - i).map((v) => (
              <option key={v} value={String(v)}>
                version {v}
              </option>
            ))}
          </select>
        </label>
      )}
      {chosen && (
        <>
          <InputChoice
            label="The input each case's input fills"
            none="none: each case's input is a JSON object of the inputs"
            value={values.input_name}
            inputs={strings}
            set={change('input_name')}
          />
          <InputChoice
            label="The input each case's alert fills"
            none="none"
            value={values.alert_input_name}
            inputs={strings}
            set={change('alert_input_name')}
          />
        </>
      )}
      <ProblemAlert problem={playbooks.problem ?? doc.problem} />
      <label>
        Time limit of each run (seconds)
        <input
          type="number"
          min={1}
          max={3600}
          placeholder="600"
          value={values.timeout_seconds}
          onInput={(e) => change('timeout_seconds')(e.currentTarget.value)}
        />
      </label>
    </fieldset>
  );
}
