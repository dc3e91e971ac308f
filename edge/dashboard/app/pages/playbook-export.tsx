// Exporting a playbook version's document as a file (JSON or YAML, as `importPlaybook` takes it
// back), to keep in a repository or import in another organization.
import { useState } from 'preact/hooks';
import { downloadFile } from '../download.ts';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';
import type { PlaybookDetail } from './playbooks.tsx';

export function ExportPlaybook({ path, playbook }: { path: string; playbook: PlaybookDetail }) {
  const { api } = useSession();
  const [version, setVersion] = useState(String(playbook.published_version ?? playbook.latest_version));
  const [format, setFormat] = useState<'json' | 'yaml'>('yaml');
  const action = useAction(() => {});
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const name = `${playbook.id}-v${version}.${format}`;
      const type = format === 'yaml' ? 'application/yaml' : 'application/json';
      const bytes = await downloadFile(api, `${path}/export?version=${version}&format=${format}`, name, type);
      return `Saved ${name} (${bytes} bytes).`;
    });
  };
  return (
    <form onSubmit={save} class="inline-form" aria-label="Export the playbook">
      <label>
        Version to export
        <select value={version} onChange={(e) => setVersion(e.currentTarget.value)}>
          {Array.from({ length: playbook.latest_version }, (_, i) => playbook.latest_version - i).map((v) => (
            <option key={v} value={String(v)}>
              version {v}
              {v === playbook.published_version ? ' (published)' : ''}
            </option>
          ))}
        </select>
      </label>
      <label>
        File format
        <select value={format} onChange={(e) => setFormat(e.currentTarget.value as 'json' | 'yaml')}>
          <option value="yaml">YAML</option>
          <option value="json">JSON</option>
        </select>
      </label>
      <button type="submit" disabled={action.busy}>
        Export as a file
      </button>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </form>
  );
}
