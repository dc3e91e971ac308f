// One playbook: its facts and the latest version's document; members check a changed document
// (every problem with its place, from `validatePlaybook`) and save it as the next version (with
// If-Match, so a version someone saved meanwhile is not overwritten unseen), publish a version or
// roll back to an older one (playbook-versions.tsx), run the published version (playbook-run.tsx),
// which opens an investigation; everyone exports a version as a file (playbook-export.tsx).
import { useEffect, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { RawBody } from '../api.ts';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { Page, ProblemAlert, useAction, useResource, when } from '../ui.tsx';
import { ExportPlaybook } from './playbook-export.tsx';
import { RunPlaybook } from './playbook-run.tsx';
import { PlaybookVersions } from './playbook-versions.tsx';
import type { PlaybookDetail } from './playbooks.tsx';

interface Validation {
  valid: boolean;
  problems: { path: string; message: string }[];
}

function Problems({ checked }: { checked: Validation }) {
  if (checked.valid) return <p role="status">The document is valid.</p>;
  return (
    <div class="problem" role="alert">
      <p>
        <strong>The document has {checked.problems.length} problem(s)</strong>
      </p>
      <ul>
        {checked.problems.map((p) => (
          <li key={`${p.path}:${p.message}`}>
            <code>{p.path || '/'}</code>: {p.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

function EditDocument({ path, playbook, etag, saved }: { path: string; playbook: PlaybookDetail; etag: string | null; saved: () => void }) {
  const { api, organization } = useSession();
  const [text, setText] = useState('');
  const [publish, setPublish] = useState(false);
  const [checked, setChecked] = useState<Validation>();
  const action = useAction(saved);
  // Checking changes nothing, so it reloads nothing; the text is the stored document again only
  // when there is a new version (saved here or elsewhere), never under the member's edits.
  const checking = useAction(() => {});
  // biome-ignore lint/correctness/useExhaustiveDependencies: the text follows the version, not every reload
  useEffect(() => setText(JSON.stringify(playbook.document, null, 2)), [playbook.id, playbook.latest_version]);
  const check = () =>
    void checking.run(async () => {
      const base = `/organizations/${organization.organization_id}/playbooks/validate`;
      const { data } = await api.call<Validation>('POST', base, { body: new RawBody(text, 'application/json') });
      setChecked(data);
      return '';
    });
  const save = (e: Event) => {
    e.preventDefault();
    setChecked(undefined);
    void action.run(async () => {
      const document = JSON.parse(text) as unknown;
      const { data } = await api.call<PlaybookDetail>('PUT', path, { body: { document, publish }, ifMatch: etag ?? undefined });
      return `Version ${data.latest_version} saved${publish ? ' and published' : ''}.`;
    });
  };
  return (
    <details>
      <summary>Change the document</summary>
      <form onSubmit={save} class="stacked-form">
        <label>
          Document (JSON)
          <textarea rows={16} class="code" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={publish} onChange={(e) => setPublish(e.currentTarget.checked)} /> Publish the new version
        </label>
        <p class="actions">
          <button type="button" onClick={check} disabled={action.busy || checking.busy}>
            Check the document
          </button>
          <button type="submit" disabled={action.busy || checking.busy}>
            Save as a new version
          </button>
        </p>
      </form>
      {checked && <Problems checked={checked} />}
      <ProblemAlert problem={checking.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

function Facts({ playbook: p }: { playbook: PlaybookDetail }) {
  return (
    <dl class="facts">
      <dt>Latest version</dt>
      <dd>{p.latest_version}</dd>
      <dt>Published version</dt>
      <dd>{p.published_version === null ? 'none: publish one to run it' : `${p.published_version}, since ${when(p.published_at)}`}</dd>
      <dt>Structured steps</dt>
      <dd>{p.has_steps ? 'yes: the built-in runner executes them' : 'no: an agent follows the instructions'}</dd>
      <dt>Created</dt>
      <dd>
        {when(p.created_at)} by <code>{p.created_by}</code>
      </dd>
    </dl>
  );
}

export function PlaybookPage() {
  const { settings, organization } = useSession();
  const { params } = useRoute();
  const path = `/organizations/${organization.organization_id}/playbooks/${params.id}`;
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((v) => v + 1);
  const { data: playbook, etag, problem } = useResource<PlaybookDetail>(path, version);
  const mayWrite = can(organization.role, 'updatePlaybook');
  return (
    <Page title={playbook ? `Playbook ${playbook.name}` : 'Playbook'}>
      <p>
        <a href={`${settings.basePath}/playbooks`}>All playbooks</a>
      </p>
      <ProblemAlert problem={problem} />
      {playbook && (
        <>
          {playbook.description && <p>{playbook.description}</p>}
          <Facts playbook={playbook} />
          <h2>Instructions (version {playbook.latest_version})</h2>
          <p class="content">{String(playbook.document.instructions ?? '')}</p>
          {mayWrite && <EditDocument path={path} playbook={playbook} etag={etag} saved={reload} />}
          {can(organization.role, 'runPlaybook') && playbook.published_version !== null && <RunPlaybook path={path} playbook={playbook} />}
          {can(organization.role, 'exportPlaybook') && <ExportPlaybook key={playbook.latest_version} path={path} playbook={playbook} />}
          <PlaybookVersions path={path} playbook={playbook} etag={etag} version={version} changed={reload} />
        </>
      )}
    </Page>
  );
}
