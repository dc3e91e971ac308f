// Seeding the Brain: the organization's seeding runs, newest first, with their progress; members
// start one from files (each file its own run: Markdown, HTML, plain text, JSON Lines, a zip of a
// docs folder) or from a web page (where the deployment allows URL sources), into a namespace,
// under a key prefix, tagged, and written at once or held for review. Each opens on its own page
// (seeding-run.tsx), followed live.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { RawBody } from '../api.ts';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

export interface SeedingRun {
  id: string;
  status: 'queued' | 'extracting' | 'awaiting_review' | 'writing' | 'succeeded' | 'failed' | 'cancelled';
  source: { kind: 'upload' | 'url'; name: string; media_type: string; bytes: number };
  namespace: 'knowledge' | 'episodes';
  key_prefix: string;
  tags: string[];
  review: boolean;
  progress: Record<string, number>;
  error: string;
  stop_reason: string;
  created_by: string;
  attempt: number;
  created_at: string | null;
  finished_at: string | null;
}

export const finished = (r: SeedingRun) => r.status === 'succeeded' || r.status === 'failed' || r.status === 'cancelled';

/** Items whose outcome is settled (neither waiting to be extracted, reviewed nor written). */
export function decided(r: SeedingRun): number {
  const p = r.progress;
  return p.total - p.pending - p.awaiting_review - p.approved;
}

/** The media type the API takes for a file, by its name first (browsers know few of them). */
const BY_EXTENSION: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  jsonl: 'application/jsonl',
  ndjson: 'application/x-ndjson',
  zip: 'application/zip',
};
export const mediaTypeOf = (file: File) => BY_EXTENSION[file.name.split('.').pop()?.toLowerCase() ?? ''] ?? (file.type || 'text/plain');

interface Options {
  namespace: string;
  keyPrefix: string;
  tags: string;
  review: boolean;
}

function StartSeeding({ base, started }: { base: string; started: () => void }) {
  const { api, settings } = useSession();
  const { route } = useLocation();
  const [source, setSource] = useState<'files' | 'url'>('files');
  const [files, setFiles] = useState<File[]>([]);
  const [url, setUrl] = useState('');
  const [o, setOptions] = useState<Options>({ namespace: 'knowledge', keyPrefix: '', tags: '', review: false });
  const action = useAction(started);
  const set = (change: Partial<Options>) => setOptions({ ...o, ...change });
  const tags = o.tags
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const upload = async (file: File) => {
    const query = new URLSearchParams({ filename: file.name, namespace: o.namespace, review: String(o.review) });
    if (o.keyPrefix) query.set('key_prefix', o.keyPrefix);
    if (tags.length) query.set('tags', tags.join(','));
    const body = new RawBody(file, mediaTypeOf(file));
    return (await api.call<SeedingRun>('POST', `${base}?${query}`, { body, idempotencyKey: crypto.randomUUID() })).data;
  };
  const start = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const runs: SeedingRun[] = [];
      if (source === 'url') {
        const body = { url, namespace: o.namespace, ...(o.keyPrefix ? { key_prefix: o.keyPrefix } : {}), tags, review: o.review };
        runs.push((await api.call<SeedingRun>('POST', base, { body, idempotencyKey: crypto.randomUUID() })).data);
      } else {
        for (const file of files) runs.push(await upload(file));
      }
      if (runs.length === 1) route(`${settings.basePath}/seeding/${runs[0].id}`);
      return `${runs.length} seeding run(s) started: ${runs.map((r) => r.source.name).join(', ')}.`;
    });
  };
  return (
    <details>
      <summary>Seed the Brain</summary>
      <form onSubmit={start} class="stacked-form" aria-label="Seed the Brain">
        <fieldset class="picks">
          <legend>From</legend>
          <label>
            <input type="radio" name="seed-source" checked={source === 'files'} onChange={() => setSource('files')} /> files
          </label>
          <label>
            <input type="radio" name="seed-source" checked={source === 'url'} onChange={() => setSource('url')} /> a web page
          </label>
        </fieldset>
        {source === 'files' ? (
          <label>
            Files (Markdown, HTML, text, JSON Lines, a zip of a docs folder; each its own run)
            <input
              type="file"
              multiple
              required
              accept=".md,.markdown,.txt,.html,.htm,.jsonl,.ndjson,.zip"
              onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])}
            />
          </label>
        ) : (
          <label>
            Page URL
            <input type="url" required maxLength={2000} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>
        )}
        <label>
          Namespace
          <select value={o.namespace} onChange={(e) => set({ namespace: e.currentTarget.value })}>
            <option value="knowledge">knowledge</option>
            <option value="episodes">episodes</option>
          </select>
        </label>
        <label>
          Key prefix
          <input maxLength={100} placeholder="docs/" value={o.keyPrefix} onInput={(e) => set({ keyPrefix: e.currentTarget.value })} />
        </label>
        <label>
          Tags (comma-separated, at most 8)
          <input value={o.tags} onInput={(e) => set({ tags: e.currentTarget.value })} />
        </label>
        <label>
          <input type="checkbox" checked={o.review} onChange={(e) => set({ review: e.currentTarget.checked })} /> Hold what it extracts for
          review before writing
        </label>
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Starting…' : 'Start seeding'}
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function SeedingPage() {
  const { settings, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/seeding-runs`;
  const runs = usePaged<SeedingRun>(`${base}?page_size=25`, 'seeding_runs');
  return (
    <Page title="Seeding runs">
      {can(organization.role, 'createSeedingRun') && <StartSeeding base={base} started={runs.reload} />}
      <ProblemAlert problem={runs.problem} />
      <table>
        <caption>Seeding runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Source</th>
            <th scope="col">Status</th>
            <th scope="col">Decided</th>
            <th scope="col">Stored</th>
            <th scope="col">Into</th>
            <th scope="col">Started</th>
          </tr>
        </thead>
        <tbody>
          {runs.items.map((r) => (
            <tr key={r.id}>
              <td>
                <a href={`${settings.basePath}/seeding/${r.id}`}>{r.source.name}</a>
              </td>
              <td>{r.status}</td>
              <td>
                {decided(r)} of {r.progress.total}
              </td>
              <td>{r.progress.stored}</td>
              <td>
                {r.namespace}/{r.key_prefix}
              </td>
              <td>{when(r.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!runs.loading && runs.items.length === 0 && !runs.problem && <p>No seeding runs yet.</p>}
      <MoreButton paged={runs} label="Older seeding runs" />
    </Page>
  );
}
