// Alert rules: which alerts open an investigation (tried oldest first; the first that matches
// acts), what its run does (instructions or a playbook) and who is told. Everyone reads them;
// admins and owners add one, change one in place (at the version read, If-Match), enable or
// disable one, and delete one (confirmed). The form is alert-rule-form.tsx.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource } from '../ui.tsx';
import { type AlertRule, matcherText, type RuleChoices, RuleForm } from './alert-rule-form.tsx';
import type { Playbook } from './playbooks.tsx';

function AddRule({ base, choices, after }: { base: string; choices: RuleChoices; after: () => void }) {
  const { api } = useSession();
  const action = useAction(after);
  const submit = async (body: { name: string }) => {
    let added = false;
    await action.run(async () => {
      await api.call('POST', base, { body, idempotencyKey: crypto.randomUUID() });
      added = true;
      return `Rule ${body.name} added.`;
    });
    return added;
  };
  return (
    <details>
      <summary>Add a rule</summary>
      <RuleForm choices={choices} submit={submit} label="Add rule" busy={action.busy} problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

/** A rule read on its own (for its ETag) and changed in place under it. */
function ChangeRule({ path, choices, done }: { path: string; choices: RuleChoices; done: (notice: string) => void }) {
  const { api } = useSession();
  const current = useResource<AlertRule>(path);
  const action = useAction(() => {});
  const submit = async (body: object) => {
    await action.run(async () => {
      const { data } = await api.call<AlertRule>('PATCH', path, { body, ifMatch: current.etag ?? undefined });
      done(`Rule ${data.name} saved.`);
      return '';
    });
    return false;
  };
  return (
    <div class="panel">
      <ProblemAlert problem={current.problem} />
      {current.data && (
        <RuleForm rule={current.data} choices={choices} submit={submit} label="Save the rule" busy={action.busy} problem={action.problem} />
      )}
    </div>
  );
}

function ActionText({ rule: r, playbooks }: { rule: AlertRule; playbooks: Playbook[] }) {
  const { settings } = useSession();
  const p = r.action.playbook;
  if (!p) return <>{r.action.executor === 'external' ? 'an external agent' : 'the LLM runner'}, with instructions</>;
  const name = playbooks.find((x) => x.id === p.id)?.name ?? p.id;
  return (
    <>
      playbook <a href={`${settings.basePath}/playbooks/${p.id}`}>{name}</a>,{' '}
      {p.version === null ? 'the published version' : `version ${p.version}`}
      {Object.keys(p.inputs).length > 0 && (
        <>
          {' '}
          with <code>{JSON.stringify(p.inputs)}</code>
        </>
      )}
    </>
  );
}

function RuleRow({
  rule: r,
  choices,
  mayAdmin,
  act,
}: {
  rule: AlertRule;
  choices: RuleChoices;
  mayAdmin: boolean;
  act: (r: AlertRule, how: 'toggle' | 'delete' | 'change') => void;
}) {
  const sourceName = (id: string) => choices.sources.find((s) => s.id === id)?.name ?? id;
  const endpoint = (id: string) => choices.endpoints.find((e) => e.id === id)?.url ?? id;
  const told = [...r.notifications.emails, ...r.notifications.webhook_endpoint_ids.map(endpoint)];
  return (
    <tr>
      <td>{r.name}</td>
      <td>{r.severities.join(', ') || 'any'}</td>
      <td>{r.matchers.map(matcherText).join(', ') || 'any'}</td>
      <td>{r.source_ids.map(sourceName).join(', ') || 'any'}</td>
      <td>{r.enabled ? 'enabled' : 'disabled'}</td>
      <td>
        <ActionText rule={r} playbooks={choices.playbooks} />
      </td>
      <td>{told.join(', ') || '—'}</td>
      {mayAdmin && (
        <td>
          <button type="button" onClick={() => act(r, 'change')}>
            Change {r.name}
          </button>{' '}
          <button type="button" onClick={() => act(r, 'toggle')}>
            {r.enabled ? `Disable ${r.name}` : `Enable ${r.name}`}
          </button>{' '}
          <button type="button" class="danger" onClick={() => act(r, 'delete')}>
            Delete {r.name}
          </button>
        </td>
      )}
    </tr>
  );
}

/** What rules are written with: the sources, playbooks and (for admins) webhook endpoints. */
function useChoices(org: string, mayAdmin: boolean): RuleChoices {
  const sources = usePaged<RuleChoices['sources'][number]>(`${org}/alert-sources?page_size=100`, 'sources');
  const playbooks = usePaged<Playbook>(`${org}/playbooks?page_size=100`, 'playbooks');
  const endpoints = usePaged<RuleChoices['endpoints'][number]>(mayAdmin ? `${org}/webhook-endpoints?page_size=100` : null, 'endpoints');
  return { sources: sources.items, playbooks: playbooks.items, endpoints: endpoints.items };
}

export function AlertRulesPage() {
  const { api, organization } = useSession();
  const org = `/organizations/${organization.organization_id}`;
  const base = `${org}/alert-rules`;
  const rules = usePaged<AlertRule>(base, 'rules');
  const action = useAction(rules.reload);
  const [changing, setChanging] = useState<string>();
  const mayAdmin = can(organization.role, 'createAlertRule');
  const choices = useChoices(org, mayAdmin);
  const act = (r: AlertRule, how: 'toggle' | 'delete' | 'change') => {
    if (how === 'change') return setChanging(changing === r.id ? undefined : r.id);
    if (how === 'delete' && !confirmed(`Delete the rule ${r.name}? The investigations it opened stay.`)) return;
    void action.run(async () => {
      if (how === 'delete') await api.call('DELETE', `${base}/${r.id}`);
      else await api.call('PATCH', `${base}/${r.id}`, { body: { enabled: !r.enabled } });
      return how === 'delete' ? `Rule ${r.name} deleted.` : `Rule ${r.name} ${r.enabled ? 'disabled' : 'enabled'}.`;
    });
  };
  const changed = (notice: string) =>
    void action.run(async () => {
      setChanging(undefined);
      return notice;
    });
  const columns = mayAdmin ? 8 : 7;
  return (
    <Page title="Alert rules">
      {mayAdmin && <AddRule base={base} choices={choices} after={rules.reload} />}
      <ProblemAlert problem={rules.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      <table>
        <caption>Alert rules, in the order they are tried</caption>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Severities</th>
            <th scope="col">Labels</th>
            <th scope="col">Sources</th>
            <th scope="col">State</th>
            <th scope="col">The run</th>
            <th scope="col">Told</th>
            {mayAdmin && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rules.items.map((r) => (
            <Fragment key={r.id}>
              <RuleRow rule={r} choices={choices} mayAdmin={mayAdmin} act={act} />
              {changing === r.id && (
                <tr>
                  <td colSpan={columns}>
                    <ChangeRule path={`${base}/${r.id}`} choices={choices} done={changed} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
      {!rules.loading && rules.items.length === 0 && !rules.problem && <p>No rules: alerts are recorded, and open no investigation.</p>}
      <MoreButton paged={rules} label="More rules" />
    </Page>
  );
}
