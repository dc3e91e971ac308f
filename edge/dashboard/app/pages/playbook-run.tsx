// Running a playbook's published version: its declared inputs (a field each, typed values read as
// JSON), a title, and for a version without steps who runs it (the LLM runner or an external
// agent). The run opens an investigation, linked once queued.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction, useResource } from '../ui.tsx';
import { type DeclaredInput, InputFields, inputsOf } from './playbook-inputs.tsx';
import type { PlaybookDetail } from './playbooks.tsx';

export function RunPlaybook({ path, playbook }: { path: string; playbook: PlaybookDetail }) {
  const { api, settings } = useSession();
  // A run uses the published version, whose inputs and steps may differ from the latest one's.
  const published = useResource<{ document: Record<string, unknown>; has_steps: boolean }>(
    `${path}/versions/${playbook.published_version}`,
  );
  const declared = (published.data?.document.inputs ?? []) as DeclaredInput[];
  const [values, setValues] = useState<Record<string, string>>({});
  const [title, setTitle] = useState('');
  const [executor, setExecutor] = useState<'' | 'llm' | 'external'>('');
  const [thread, setThread] = useState<string>();
  const action = useAction(() => {});
  const run = (e: Event) => {
    e.preventDefault();
    setThread(undefined);
    void action.run(async () => {
      const inputs = inputsOf(declared, values);
      const body = { inputs, ...(title ? { title } : {}), ...(executor ? { executor } : {}) };
      const { data } = await api.call<{ id: string; thread_id: string }>('POST', `${path}/runs`, {
        body,
        idempotencyKey: crypto.randomUUID(),
      });
      setThread(data.thread_id);
      return `Run ${data.id} of version ${playbook.published_version} queued.`;
    });
  };
  return (
    <section aria-labelledby="run-title">
      <h2 id="run-title">Run version {playbook.published_version}</h2>
      <form onSubmit={run} class="stacked-form">
        <InputFields declared={declared} values={values} onChange={setValues} />
        <label>
          Investigation title
          <input maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} placeholder={playbook.name} />
        </label>
        {published.data && !published.data.has_steps && (
          <label>
            Runs it
            <select value={executor} onChange={(e) => setExecutor(e.currentTarget.value as '' | 'llm' | 'external')}>
              <option value="">the platform's LLM runner</option>
              <option value="external">an external agent</option>
            </select>
          </label>
        )}
        <button type="submit" disabled={action.busy}>
          Run the playbook
        </button>
      </form>
      <ProblemAlert problem={published.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {thread && (
        <p>
          <a href={`${settings.basePath}/investigations/${thread}`}>Open the investigation</a>
        </p>
      )}
    </section>
  );
}
