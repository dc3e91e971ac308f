// Confidential clients: the organization's own machine clients (client_credentials at
// `{auth_url}/token`); admins and owners create one (its secret shown once), rotate its secret
// and delete it (its tokens stop working).
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { SecretOnce } from '../secret-once.tsx';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

interface ConfidentialClient {
  client_id: string;
  client_name: string;
  created_at: string;
  secret_rotated_at: string | null;
}

interface WithSecret {
  client: ConfidentialClient;
  client_secret: string;
}

export function ConfidentialClientsPage() {
  const { api, organization, settings } = useSession();
  const base = `/organizations/${organization.organization_id}/confidential-clients`;
  const clients = usePaged<ConfidentialClient>(base, 'clients');
  const action = useAction(clients.reload);
  const [name, setName] = useState('');
  const [shown, setShown] = useState<WithSecret>();
  const mayAdmin = can(organization.role, 'createConfidentialClient');

  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { data } = await api.call<WithSecret>('POST', base, { body: { name }, idempotencyKey: crypto.randomUUID() });
      setShown(data);
      setName('');
      return `Client ${data.client.client_name} created.`;
    });
  };
  const rotate = (c: ConfidentialClient) => {
    if (!confirmed(`Rotate the secret of ${c.client_name}? The current one stops working at once.`)) return;
    void action.run(async () => {
      const { data } = await api.call<WithSecret>('POST', `${base}/${encodeURIComponent(c.client_id)}/rotate-secret`);
      setShown(data);
      return `The secret of ${c.client_name} was rotated.`;
    });
  };
  const remove = (c: ConfidentialClient) => {
    if (!confirmed(`Delete ${c.client_name}? Its tokens stop working.`)) return;
    void action.run(async () => {
      await api.call('DELETE', `${base}/${encodeURIComponent(c.client_id)}`);
      return `Client ${c.client_name} deleted.`;
    });
  };

  return (
    <Page title="Confidential clients">
      <p>
        A confidential client gets tokens for the Agents API with <code>grant_type=client_credentials</code> at{' '}
        <code>{settings.authUrl}/token</code>, authenticated with its id and secret.
      </p>
      {mayAdmin && (
        <form onSubmit={create} class="inline-form">
          <label>
            Client name
            <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={action.busy}>
            Create client
          </button>
        </form>
      )}
      {shown && <SecretOnce name={shown.client.client_name} secret={shown.client_secret} onDone={() => setShown(undefined)} />}
      <ProblemAlert problem={clients.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      <table>
        <caption>Confidential clients of {organization.organization_name}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Client id</th>
            <th scope="col">Created</th>
            <th scope="col">Secret rotated</th>
            {mayAdmin && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {clients.items.map((c) => (
            <tr key={c.client_id}>
              <td>{c.client_name}</td>
              <td>
                <code>{c.client_id}</code>
              </td>
              <td>{when(c.created_at)}</td>
              <td>{when(c.secret_rotated_at)}</td>
              {mayAdmin && (
                <td>
                  <button type="button" disabled={action.busy} onClick={() => rotate(c)}>
                    Rotate secret of {c.client_name}
                  </button>{' '}
                  <button type="button" class="danger" disabled={action.busy} onClick={() => remove(c)}>
                    Delete {c.client_name}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={clients} label="More clients" />
    </Page>
  );
}
