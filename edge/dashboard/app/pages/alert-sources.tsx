// Alert sources: where monitoring systems send their alerts. Everyone lists them (never their
// secrets); admins and owners add one (its secret shown once, with the receive URL and the
// Alertmanager receiver that uses both), replace its secret (the new one shown once) and delete it.
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { SecretOnce } from '../secret-once.tsx';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, when } from '../ui.tsx';

interface AlertSource {
  id: string;
  name: string;
  format: 'alertmanager' | 'generic';
  receive_url: string;
  secret_prefix: string;
  created_at: string | null;
  last_received_at: string | null;
}

interface WithSecret {
  source: AlertSource;
  secret: string;
}

/** How to point the monitoring system at the source, secret included. */
function HowToSend({ shown }: { shown: WithSecret }) {
  const { source, secret } = shown;
  const alertmanager = `receivers:\n  - name: mindgate\n    webhook_configs:\n      - url: ${source.receive_url}\n        http_config:\n          authorization:\n            credentials: ${secret}\n`;
  return (
    <>
      <p>
        Receive URL: <code data-testid="receive-url">{source.receive_url}</code>
      </p>
      {source.format === 'alertmanager' ? (
        <>
          <p>In alertmanager.yml:</p>
          <pre>{alertmanager}</pre>
        </>
      ) : (
        <p>
          POST one JSON alert (<code>title</code>, <code>status</code>, <code>severity</code>, <code>labels</code>…) there with{' '}
          <code>Authorization: Bearer</code> and the secret.
        </p>
      )}
    </>
  );
}

function AddSource({ base, shown }: { base: string; shown: (s: WithSecret) => void }) {
  const { api } = useSession();
  const [name, setName] = useState('');
  const [format, setFormat] = useState<'alertmanager' | 'generic'>('alertmanager');
  const action = useAction(() => {});
  const add = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { data } = await api.call<WithSecret>('POST', base, { body: { name, format }, idempotencyKey: crypto.randomUUID() });
      shown(data);
      setName('');
      return `Source ${data.source.name} added.`;
    });
  };
  return (
    <>
      <form onSubmit={add} class="inline-form">
        <label>
          Source name
          <input required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Format
          <select value={format} onChange={(e) => setFormat(e.currentTarget.value as 'alertmanager' | 'generic')}>
            <option value="alertmanager">Prometheus Alertmanager</option>
            <option value="generic">generic JSON</option>
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          Add source
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </>
  );
}

export function AlertSourcesPage() {
  const { api, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/alert-sources`;
  const sources = usePaged<AlertSource>(base, 'sources');
  const [shown, setShown] = useState<WithSecret>();
  const action = useAction(sources.reload);
  const mayAdmin = can(organization.role, 'createAlertSource');
  const rotate = (s: AlertSource) => {
    if (!confirmed(`Replace the secret of ${s.name}? The current one is refused at once.`)) return;
    void action.run(async () => {
      const { data } = await api.call<WithSecret>('POST', `${base}/${s.id}/rotate-secret`);
      setShown(data);
      return `Secret of ${s.name} replaced.`;
    });
  };
  const remove = (s: AlertSource) => {
    if (!confirmed(`Delete ${s.name}? Its URL refuses alerts from now on; its alerts stay.`)) return;
    void action.run(async () => {
      await api.call('DELETE', `${base}/${s.id}`);
      return `Source ${s.name} deleted.`;
    });
  };
  return (
    <Page title="Alert sources">
      {mayAdmin && (
        <AddSource
          base={base}
          shown={(s) => {
            setShown(s);
            sources.reload();
          }}
        />
      )}
      {shown && (
        <SecretOnce name={shown.source.name} secret={shown.secret} onDone={() => setShown(undefined)}>
          <HowToSend shown={shown} />
        </SecretOnce>
      )}
      <ProblemAlert problem={sources.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      <table>
        <caption>Alert sources, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Source</th>
            <th scope="col">Format</th>
            <th scope="col">Receive URL</th>
            <th scope="col">Last received</th>
            {mayAdmin && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {sources.items.map((s) => (
            <tr key={s.id}>
              <td>
                {s.name} <code class="meta">{s.secret_prefix}…</code>
              </td>
              <td>{s.format}</td>
              <td>
                <code>{s.receive_url}</code>
              </td>
              <td>{when(s.last_received_at)}</td>
              {mayAdmin && (
                <td>
                  <button type="button" onClick={() => rotate(s)}>
                    Replace the secret of {s.name}
                  </button>{' '}
                  <button type="button" class="danger" onClick={() => remove(s)}>
                    Delete {s.name}
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {!sources.loading && sources.items.length === 0 && !sources.problem && <p>No alert sources yet.</p>}
      <MoreButton paged={sources} label="More sources" />
    </Page>
  );
}
