// Alert rules: which alerts open an investigation (tried oldest first; the first that matches
// acts). Everyone reads them; admins and owners add one (severities, label matchers, sources, and
// what the investigation's run is told), enable or disable one, and delete one.
import { useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged } from '../ui.tsx';

interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

interface AlertRule {
  id: string;
  name: string;
  enabled: boolean;
  severities: string[];
  matchers: Matcher[];
  source_ids: string[];
  action: { type: 'investigate'; instructions: string; executor: 'llm' | 'external'; timeout_seconds: number };
}

const MATCHER = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*(.*?)\s*$/;

/** `service=checkout` lines as matchers; a line that is none is a problem naming it. */
function parseMatchers(text: string): Matcher[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const m = MATCHER.exec(line);
      if (!m) throw new Error(`“${line.trim()}” is not a matcher: write label=value, label!=value, label=~regex or label!~regex`);
      return { label: m[1], op: m[2] as Matcher['op'], value: m[3] };
    });
}

function AddRule({ base, after }: { base: string; after: () => void }) {
  const { api } = useSession();
  const [f, setF] = useState({ name: '', severities: '', matchers: '', instructions: '', executor: 'llm' });
  const set = (k: keyof typeof f) => (e: { currentTarget: { value: string } }) => setF({ ...f, [k]: e.currentTarget.value });
  const action = useAction(after);
  const add = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = {
        name: f.name,
        severities: f.severities
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        matchers: parseMatchers(f.matchers),
        action: { type: 'investigate', instructions: f.instructions, executor: f.executor },
      };
      await api.call('POST', base, { body, idempotencyKey: crypto.randomUUID() });
      setF({ name: '', severities: '', matchers: '', instructions: '', executor: 'llm' });
      return `Rule ${body.name} added.`;
    });
  };
  return (
    <details>
      <summary>Add a rule</summary>
      <form onSubmit={add} class="stacked-form">
        <label>
          Rule name
          <input required maxLength={200} value={f.name} onInput={set('name')} />
        </label>
        <label>
          Severities (comma-separated; empty for any)
          <input value={f.severities} onInput={set('severities')} placeholder="critical, warning" />
        </label>
        <label>
          Label matchers (one a line; all must hold)
          <textarea rows={3} class="code" value={f.matchers} onInput={set('matchers')} placeholder="service=checkout" />
        </label>
        <label>
          Instructions for the investigation's run
          <textarea rows={3} maxLength={20000} value={f.instructions} onInput={set('instructions')} />
        </label>
        <label>
          Runs it
          <select value={f.executor} onChange={set('executor')}>
            <option value="llm">the platform's LLM runner</option>
            <option value="external">an external agent</option>
          </select>
        </label>
        <button type="submit" disabled={action.busy}>
          Add rule
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

function RuleRow({
  rule: r,
  mayAdmin,
  act,
}: {
  rule: AlertRule;
  mayAdmin: boolean;
  act: (r: AlertRule, how: 'toggle' | 'delete') => void;
}) {
  return (
    <tr>
      <td>{r.name}</td>
      <td>{r.severities.join(', ') || 'any'}</td>
      <td>{r.matchers.map((m) => `${m.label}${m.op}${m.value}`).join(', ') || 'any'}</td>
      <td>{r.enabled ? 'enabled' : 'disabled'}</td>
      <td>{r.action.executor === 'external' ? 'an external agent' : 'the LLM runner'}</td>
      {mayAdmin && (
        <td>
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

export function AlertRulesPage() {
  const { api, organization } = useSession();
  const base = `/organizations/${organization.organization_id}/alert-rules`;
  const rules = usePaged<AlertRule>(base, 'rules');
  const action = useAction(rules.reload);
  const mayAdmin = can(organization.role, 'createAlertRule');
  const act = (r: AlertRule, how: 'toggle' | 'delete') => {
    if (how === 'delete' && !confirmed(`Delete the rule ${r.name}? The investigations it opened stay.`)) return;
    void action.run(async () => {
      if (how === 'delete') await api.call('DELETE', `${base}/${r.id}`);
      else await api.call('PATCH', `${base}/${r.id}`, { body: { enabled: !r.enabled } });
      return how === 'delete' ? `Rule ${r.name} deleted.` : `Rule ${r.name} ${r.enabled ? 'disabled' : 'enabled'}.`;
    });
  };
  const problem: ProblemDocument | undefined = rules.problem ?? action.problem;
  return (
    <Page title="Alert rules">
      {mayAdmin && <AddRule base={base} after={rules.reload} />}
      <ProblemAlert problem={problem} />
      <p role="status">{action.notice}</p>
      <table>
        <caption>Alert rules, in the order they are tried</caption>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Severities</th>
            <th scope="col">Labels</th>
            <th scope="col">State</th>
            <th scope="col">Investigated by</th>
            {mayAdmin && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {rules.items.map((r) => (
            <RuleRow key={r.id} rule={r} mayAdmin={mayAdmin} act={act} />
          ))}
        </tbody>
      </table>
      {!rules.loading && rules.items.length === 0 && !rules.problem && <p>No rules: alerts are recorded, and open no investigation.</p>}
      <MoreButton paged={rules} label="More rules" />
    </Page>
  );
}
