// Playbooks: versioned procedures agents follow. Everyone lists them (newest first); members and
// above write one from its name and instructions, or import a whole document (JSON or YAML, as
// `exportPlaybook` gives it). Each opens on its own page (playbook.tsx) with its versions.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { RawBody } from '../api.ts';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

export interface Playbook {
  id: string;
  name: string;
  description: string;
  latest_version: number;
  published_version: number | null;
  created_by: string;
  created_at: string | null;
  updated_at: string | null;
  published_at: string | null;
}

export interface PlaybookDetail extends Playbook {
  document: Record<string, unknown>;
  has_steps: boolean;
}

function CreatePlaybook({ base }: { base: string }) {
  const { api, settings } = useSession();
  const { route } = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [instructions, setInstructions] = useState('');
  const [publish, setPublish] = useState(true);
  const action = useAction(() => {});
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const document = { name, instructions, ...(description ? { description } : {}) };
      const { data } = await api.call<PlaybookDetail>('POST', base, { body: { document, publish }, idempotencyKey: crypto.randomUUID() });
      route(`${settings.basePath}/playbooks/${data.id}`);
      return `Playbook ${data.name} created.`;
    });
  };
  return (
    <details>
      <summary>Write a playbook</summary>
      <form onSubmit={create} class="stacked-form">
        <label>
          Name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input maxLength={2000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label>
          Instructions
          <textarea required rows={6} maxLength={20000} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={publish} onChange={(e) => setPublish(e.currentTarget.checked)} /> Publish it at once
        </label>
        <button type="submit" disabled={action.busy}>
          Create playbook
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

function ImportPlaybook({ base, after }: { base: string; after: () => void }) {
  const { api } = useSession();
  const [text, setText] = useState('');
  const [format, setFormat] = useState<'json' | 'yaml'>('yaml');
  const [publish, setPublish] = useState(false);
  const action = useAction(after);
  const send = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = new RawBody(text, format === 'json' ? 'application/json' : 'application/yaml');
      const { status, data } = await api.call<PlaybookDetail>('POST', `${base}/import?publish=${publish}`, {
        body,
        idempotencyKey: crypto.randomUUID(),
      });
      return status === 201 ? `Playbook ${data.name} imported.` : `Playbook ${data.name}: version ${data.latest_version} imported.`;
    });
  };
  return (
    <details>
      <summary>Import a playbook document</summary>
      <form onSubmit={send} class="stacked-form">
        <label>
          Format
          <select value={format} onChange={(e) => setFormat(e.currentTarget.value as 'json' | 'yaml')}>
            <option value="yaml">YAML</option>
            <option value="json">JSON</option>
          </select>
        </label>
        <label>
          Document
          <textarea required rows={10} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={publish} onChange={(e) => setPublish(e.currentTarget.checked)} /> Publish the imported version
        </label>
        <button type="submit" disabled={action.busy}>
          Import
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function PlaybooksPage() {
  const { settings, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/playbooks`;
  const playbooks = usePaged<Playbook>(base, 'playbooks');
  return (
    <Page title="Playbooks">
      <p>Procedures agents follow: a run of a playbook uses its published version.</p>
      {can(organization.role, 'createPlaybook') && (
        <>
          <CreatePlaybook base={base} />
          <ImportPlaybook base={base} after={playbooks.reload} />
        </>
      )}
      <ProblemAlert problem={playbooks.problem} />
      <table>
        <caption>Playbooks of {organization.organization_name}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Playbook</th>
            <th scope="col">Latest version</th>
            <th scope="col">Published version</th>
            <th scope="col">Changed</th>
          </tr>
        </thead>
        <tbody>
          {playbooks.items.map((p) => (
            <tr key={p.id}>
              <td>
                <a href={`${settings.basePath}/playbooks/${p.id}`}>{p.name}</a>
                {p.description && <span class="meta"> {p.description}</span>}
              </td>
              <td>{p.latest_version}</td>
              <td>{p.published_version ?? 'none'}</td>
              <td>{when(p.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!playbooks.loading && playbooks.items.length === 0 && !playbooks.problem && <p>No playbooks yet.</p>}
      <MoreButton paged={playbooks} label="More playbooks" />
    </Page>
  );
}
