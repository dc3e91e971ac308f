// Connected applications: the OAuth clients (MCP clients, tools, this dashboard) that users of
// the organization have authorized, each with its grants; admins and owners revoke one grant
// (one user's authorization) or every grant of a client.
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

interface Grant {
  id: string;
  user_id: string;
  scope: string;
  resources: string[];
  created_at: string;
}

interface Client {
  client_id: string;
  client_name: string | null;
  grants: Grant[];
}

export function ConnectedAppsPage() {
  const { api, me, organization, settings } = useSession();
  const base = `/organizations/${organization.organization_id}/oauth-clients`;
  const clients = usePaged<Client>(base, 'clients');
  const action = useAction(clients.reload);
  const mayRevoke = can(organization.role, 'revokeOAuthClient');
  const label = (c: Client) => c.client_name ?? c.client_id;
  const yours = (c: Client, g?: Grant) =>
    c.client_id === settings.clientId && (!g || g.user_id === me.id) ? ' This ends your own dashboard session.' : '';

  const revokeClient = (c: Client) => {
    if (!confirmed(`Revoke every grant of ${label(c)}? Its tokens stop working within seconds.${yours(c)}`)) return;
    void action.run(async () => {
      const { data } = await api.call<{ revoked_grants: number }>('POST', `${base}/${encodeURIComponent(c.client_id)}/revoke`);
      return `${label(c)}: ${data.revoked_grants} grant(s) revoked.`;
    });
  };
  const revokeGrant = (c: Client, g: Grant) => {
    if (!confirmed(`Revoke the grant of ${g.user_id} to ${label(c)}?${yours(c, g)}`)) return;
    void action.run(async () => {
      await api.call('POST', `${base}/${encodeURIComponent(c.client_id)}/grants/${encodeURIComponent(g.id)}/revoke`);
      return `The grant of ${g.user_id} to ${label(c)} was revoked.`;
    });
  };

  return (
    <Page title="Connected applications">
      <ProblemAlert problem={clients.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {!clients.loading && !clients.problem && clients.items.length === 0 && <p>No application acts for this organization.</p>}
      {clients.items.map((c) => (
        <section key={c.client_id} class="client" aria-label={label(c)}>
          <h2>{label(c)}</h2>
          <p>
            Client id <code>{c.client_id}</code>
          </p>
          <table>
            <caption>Grants of {label(c)}</caption>
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Scope</th>
                <th scope="col">Granted</th>
                {mayRevoke && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {c.grants.map((g) => (
                <tr key={g.id}>
                  <td>
                    <code>{g.user_id}</code>
                    {g.user_id === me.id && ' (you)'}
                  </td>
                  <td>{g.scope}</td>
                  <td>{when(g.created_at)}</td>
                  {mayRevoke && (
                    <td>
                      <button type="button" class="danger" disabled={action.busy} onClick={() => revokeGrant(c, g)}>
                        Revoke grant of {g.user_id}
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          {mayRevoke && (
            <button type="button" class="danger" disabled={action.busy} onClick={() => revokeClient(c)}>
              Revoke {label(c)} for everyone
            </button>
          )}
        </section>
      ))}
      <MoreButton paged={clients} label="More applications" />
    </Page>
  );
}
