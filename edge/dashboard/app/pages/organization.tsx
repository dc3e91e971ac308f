// The organization's settings: everyone sees its name, slug, id and how long its audit log is
// kept; admins and owners change the name, the slug and the retention at the version read
// (If-Match); owners hand the ownership to another member and delete the organization
// (organization-danger.tsx).
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { type Action, Page, ProblemAlert, useAction, useResource, when } from '../ui.tsx';
import { DeleteOrganization, TransferOwnership } from './organization-danger.tsx';

export interface Organization {
  id: string;
  name: string;
  slug: string | null;
  settings: { audit_retention_days: number };
  created_at: string | null;
  updated_at: string | null;
}

function ChangeOrganization({
  path,
  organization: o,
  etag,
  action,
}: {
  path: string;
  organization: Organization;
  etag: string | null;
  /** The page's: saving reads the organization again. */
  action: Action;
}) {
  const { api, reload } = useSession();
  const [name, setName] = useState(o.name);
  const [slug, setSlug] = useState(o.slug ?? '');
  const [retention, setRetention] = useState(String(o.settings.audit_retention_days));
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { name, ...(slug ? { slug } : {}), settings: { audit_retention_days: Number(retention) } };
      await api.call('PATCH', path, { body, ifMatch: etag ?? undefined });
      // The header names the organization: read the memberships again.
      await reload();
      return `${name} saved.`;
    });
  };
  return (
    <form onSubmit={save} class="stacked-form" aria-label="Change the organization">
      <label>
        Organization name
        <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Slug (3-63 of a-z, 0-9 and -)
        <input maxLength={63} value={slug} onInput={(e) => setSlug(e.currentTarget.value)} />
      </label>
      <label>
        Keep audit events for (days, 30 to 3650)
        <input type="number" required min={30} max={3650} value={retention} onInput={(e) => setRetention(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={action.busy}>
        Save the organization
      </button>
    </form>
  );
}

export function OrganizationPage() {
  const { organization } = useSession();
  const path = `/organizations/${organization.organization_id}`;
  const [version, setVersion] = useState(0);
  const { data: o, etag, problem } = useResource<Organization>(path, version);
  // Saving and handing over, whose outcome stays on the page when the role changes under it.
  const action = useAction(() => setVersion((v) => v + 1));
  return (
    <Page title="Organization settings">
      <ProblemAlert problem={problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {o && (
        <>
          <dl class="facts" data-testid="organization-facts">
            <dt>Name</dt>
            <dd>{o.name}</dd>
            <dt>Slug</dt>
            <dd>{o.slug ?? '—'}</dd>
            <dt>Id</dt>
            <dd>
              <code>{o.id}</code>
            </dd>
            <dt>Audit events kept</dt>
            <dd>{o.settings.audit_retention_days} days</dd>
            <dt>Created</dt>
            <dd>{when(o.created_at)}</dd>
          </dl>
          {can(organization.role, 'updateOrganization') && <ChangeOrganization path={path} organization={o} etag={etag} action={action} />}
          {can(organization.role, 'transferOrganizationOwnership') && <TransferOwnership path={path} action={action} />}
          {can(organization.role, 'deleteOrganization') && <DeleteOrganization path={path} organization={o} />}
        </>
      )}
    </Page>
  );
}
