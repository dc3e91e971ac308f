// Adding cases to a dataset: one from a form (the query, and the memories it should find, the
// answer it should give or a pattern the answer matches), or many as JSON Lines, one case a line
// (the answer says how many were imported and why each refused line was refused, by number); and
// every case exported as a JSON Lines file.
import { useState } from 'preact/hooks';
import { RawBody } from '../api.ts';
import { downloadFile } from '../download.ts';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';

interface Imported {
  imported: number;
  failed: { line: number; detail: string }[];
}

/** `knowledge/services/checkout` lines as memory keys. */
function memoryKeys(text: string): { namespace: string; key: string }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const at = l.indexOf('/');
      if (at <= 0) throw new Error(`“${l}” is not a memory: write namespace/key, as knowledge/services/checkout`);
      return { namespace: l.slice(0, at), key: l.slice(at + 1) };
    });
}

export function AddCase({ path, after }: { path: string; after: () => void }) {
  const { api } = useSession();
  const [f, setF] = useState({ input: '', namespace: '', memories: '', answer: '', pattern: '' });
  const set = (k: keyof typeof f) => (e: { currentTarget: { value: string } }) => setF({ ...f, [k]: e.currentTarget.value });
  const action = useAction(after);
  const add = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const expected = memoryKeys(f.memories);
      const body = {
        input: f.input,
        ...(f.namespace ? { namespace: f.namespace } : {}),
        ...(expected.length ? { expected_memories: expected } : {}),
        ...(f.answer ? { expected_answer: f.answer } : {}),
        ...(f.pattern ? { answer_pattern: f.pattern } : {}),
      };
      await api.call('POST', `${path}/cases`, { body, idempotencyKey: crypto.randomUUID() });
      setF({ input: '', namespace: f.namespace, memories: '', answer: '', pattern: '' });
      return 'Case added.';
    });
  };
  return (
    <details>
      <summary>Add a case</summary>
      <form onSubmit={add} class="stacked-form">
        <label>
          Query
          <input required maxLength={2000} value={f.input} onInput={set('input')} />
        </label>
        <label>
          Namespace searched
          <select value={f.namespace} onChange={set('namespace')}>
            <option value="">both</option>
            <option value="knowledge">knowledge</option>
            <option value="episodes">episodes</option>
          </select>
        </label>
        <label>
          Memories it should find (namespace/key, one a line)
          <textarea rows={2} class="code" value={f.memories} onInput={set('memories')} />
        </label>
        <label>
          Answer it should give
          <input value={f.answer} onInput={set('answer')} />
        </label>
        <label>
          Pattern the answer matches (RE2)
          <input value={f.pattern} onInput={set('pattern')} />
        </label>
        <button type="submit" disabled={action.busy}>
          Add the case
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function ImportCases({ path, after }: { path: string; after: () => void }) {
  const { api } = useSession();
  const [text, setText] = useState('');
  const [result, setResult] = useState<Imported>();
  const action = useAction(after);
  const send = (e: Event) => {
    e.preventDefault();
    setResult(undefined);
    void action.run(async () => {
      const { data } = await api.call<Imported>('POST', `${path}/cases/import`, {
        body: new RawBody(text, 'application/jsonl'),
        idempotencyKey: crypto.randomUUID(),
      });
      setResult(data);
      return `${data.imported} case(s) imported${data.failed.length ? `, ${data.failed.length} line(s) refused` : ''}.`;
    });
  };
  const readFile = (file: File | undefined) => void file?.text().then(setText);
  return (
    <details>
      <summary>Import cases (JSON Lines)</summary>
      <form onSubmit={send} class="stacked-form">
        <label>
          A .jsonl file
          <input type="file" accept=".jsonl,.ndjson,application/jsonl" onChange={(e) => readFile(e.currentTarget.files?.[0])} />
        </label>
        <label>
          Cases, one JSON object a line
          <textarea required rows={6} class="code" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Import the cases
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
      {result && result.failed.length > 0 && (
        <ul data-testid="import-failures">
          {result.failed.map((f) => (
            <li key={f.line}>
              Line {f.line}: {f.detail}
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}

/** Every case as JSON Lines, saved as a file (what `importCases` takes back). */
export function ExportCases({ path, datasetId }: { path: string; datasetId: string }) {
  const { api } = useSession();
  const action = useAction(() => {});
  const save = () =>
    void action.run(async () => {
      const bytes = await downloadFile(api, `${path}/cases/export`, `${datasetId}.jsonl`, 'application/jsonl');
      return `Saved ${datasetId}.jsonl (${bytes} bytes).`;
    });
  return (
    <div class="actions">
      <button type="button" onClick={save} disabled={action.busy}>
        Export the cases (JSON Lines)
      </button>
      <span role="status">{action.notice}</span>
      <ProblemAlert problem={action.problem} />
    </div>
  );
}
