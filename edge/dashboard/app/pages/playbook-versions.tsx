// A playbook's versions, newest first: each with who saved it and whether it has steps; members
// publish one, which for a version older than the published one is a rollback (confirmed: new
// runs use it from then on; runs already queued keep theirs).
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';
import type { PlaybookDetail } from './playbooks.tsx';

interface Version {
  version: number;
  document: Record<string, unknown>;
  has_steps: boolean;
  created_by: string;
  created_at: string | null;
}

export function PlaybookVersions({
  path,
  playbook,
  etag,
  version,
  changed,
}: {
  path: string;
  playbook: PlaybookDetail;
  etag: string | null;
  /** Changes when the playbook changed: the list is read again. */
  version: number;
  changed: () => void;
}) {
  const { api, organization } = useSession();
  const versions = usePaged<Version>(`${path}/versions?page_size=20`, 'versions', version);
  const [open, setOpen] = useState<number>();
  const action = useAction(changed);
  const mayPublish = can(organization.role, 'publishPlaybook');
  const published = playbook.published_version;
  const publish = (v: number) => {
    const rollback = published !== null && v < published;
    if (rollback && !confirmed(`Roll ${playbook.name} back to version ${v}? New runs use it from now on.`)) return;
    void action.run(async () => {
      await api.call('POST', `${path}/publish`, { body: { version: v }, ifMatch: etag ?? undefined });
      return rollback ? `Rolled back to version ${v}.` : `Version ${v} published.`;
    });
  };
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <ProblemAlert problem={versions.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      <table>
        <caption>Versions of {playbook.name}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Version</th>
            <th scope="col">Saved</th>
            <th scope="col">Steps</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {versions.items.map((v) => (
            <tr key={v.version}>
              <td>
                {v.version}
                {v.version === published && <strong> (published)</strong>}
              </td>
              <td>
                {when(v.created_at)} by <code>{v.created_by}</code>
              </td>
              <td>{v.has_steps ? 'yes' : 'no'}</td>
              <td>
                <button
                  type="button"
                  aria-expanded={open === v.version}
                  onClick={() => setOpen(open === v.version ? undefined : v.version)}
                >
                  Document of version {v.version}
                </button>{' '}
                {mayPublish && v.version !== published && (
                  <button type="button" onClick={() => publish(v.version)} disabled={action.busy}>
                    {published !== null && v.version < published ? `Roll back to version ${v.version}` : `Publish version ${v.version}`}
                  </button>
                )}
                {open === v.version && <pre class="document">{JSON.stringify(v.document, null, 2)}</pre>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={versions} label="Older versions" />
    </section>
  );
}
