// Choosing a playbook for something that runs it later (an alert rule, a scheduled job): the
// playbook, its version (the one published when it runs, or one pinned), and values of the inputs
// that version declares, read from its document.
import { useEffect, useRef } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useResource } from '../ui.tsx';
import { type DeclaredInput, InputFields, inputsOf, inputTexts } from './playbook-inputs.tsx';
import type { Playbook } from './playbooks.tsx';

export interface PlaybookChoice {
  id: string;
  /** A pinned version's number, or '' for the version published when it runs. */
  version: string;
  values: Record<string, string>;
  /** The inputs the chosen version declares, once read. */
  declared: DeclaredInput[];
}

export const NO_PLAYBOOK: PlaybookChoice = { id: '', version: '', values: {}, declared: [] };

/** A stored choice (`version` null: the published one), for changing it. */
export function choiceOf(id: string, version: number | null, inputs: Record<string, unknown>): PlaybookChoice {
  return { id, version: version === null ? '' : String(version), values: inputTexts(inputs), declared: [] };
}

/** The choice as the API names it: id, version (null: the published one) and typed inputs. */
export function choiceBody(c: PlaybookChoice): { id: string; version: number | null; inputs: Record<string, unknown> } {
  if (!c.id) throw new Error('Choose a playbook.');
  return { id: c.id, version: c.version ? Number(c.version) : null, inputs: inputsOf(c.declared, c.values) };
}

export function PlaybookFields({
  playbooks,
  choice,
  onChange,
  optionalInputs = false,
}: {
  playbooks: Playbook[];
  choice: PlaybookChoice;
  onChange: (c: PlaybookChoice) => void;
  /** The inputs may stay empty (an alert's fields fill those of their names). */
  optionalInputs?: boolean;
}) {
  const { organization } = useSession();
  const chosen = playbooks.find((p) => p.id === choice.id);
  const version = choice.version || (chosen?.published_version === null ? '' : String(chosen?.published_version ?? ''));
  const doc = useResource<{ document: { inputs?: DeclaredInput[] } }>(
    chosen && version ? `/organizations/${organization.organization_id}/playbooks/${chosen.id}/versions/${version}` : null,
  );
  const declared = doc.data?.document.inputs ?? [];
  // The inputs a version declares are reported once it is read, onto the latest choice: effects
  // run after paint, and on a slow machine a pick can come first (the mount's effect then undid it).
  const latest = useRef(choice);
  latest.current = choice;
  useEffect(() => {
    if (doc.data) onChange({ ...latest.current, declared });
  }, [doc.data]);
  return (
    <fieldset class="group">
      <legend>Playbook</legend>
      <label>
        Playbook
        <select required value={choice.id} onChange={(e) => onChange({ ...NO_PLAYBOOK, id: e.currentTarget.value })}>
          <option value="">choose one</option>
          {playbooks.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      {chosen && (
        <label>
          Version
          <select value={choice.version} onChange={(e) => onChange({ ...choice, version: e.currentTarget.value })}>
            <option value="">the one published when it runs{chosen.published_version === null ? ' (none yet)' : ''}</option>
            {Array.from({ length: chosen.latest_version }, (_, i) => chosen.latest_version - i).map((v) => (
              <option key={v} value={String(v)}>
                version {v} only
              </option>
            ))}
          </select>
        </label>
      )}
      <ProblemAlert problem={doc.problem} />
      {declared.length > 0 && (
        <p class="meta">
          Inputs of version {version}
          {optionalInputs ? ": an alert's fields of the same names fill those left empty" : ''}
        </p>
      )}
      <InputFields
        declared={declared}
        values={choice.values}
        onChange={(values) => onChange({ ...choice, values })}
        optional={optionalInputs}
      />
    </fieldset>
  );
}
