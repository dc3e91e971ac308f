// An alert rule's form, to add one or to change one in place: which alerts it takes (severities,
// label matchers, sources), what the investigation's run does (follow instructions, or a playbook
// at its published or a pinned version with input values), and who hears of it (e-mail addresses
// and webhook endpoints). The API checks everything again and names the field it refuses.
import { useState } from 'preact/hooks';
import type { ProblemDocument } from '../api.ts';
import { ProblemAlert } from '../ui.tsx';
import { choiceBody, choiceOf, NO_PLAYBOOK, type PlaybookChoice, PlaybookFields } from './playbook-choice.tsx';
import type { Playbook } from './playbooks.tsx';

export interface Matcher {
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

export interface AlertRule {
  id: string;
  name: string;
  enabled: boolean;
  severities: string[];
  matchers: Matcher[];
  source_ids: string[];
  action: {
    type: 'investigate';
    instructions: string;
    executor: 'llm' | 'external';
    timeout_seconds: number;
    playbook: { id: string; version: number | null; inputs: Record<string, unknown>; brain_feedback: boolean } | null;
  };
  notifications: { emails: string[]; webhook_endpoint_ids: string[] };
}

/** What the form offers to pick from. */
export interface RuleChoices {
  sources: { id: string; name: string }[];
  playbooks: Playbook[];
  endpoints: { id: string; url: string; description: string }[];
}

interface Draft {
  name: string;
  severities: string;
  matchers: string;
  sources: string[];
  follows: 'instructions' | 'playbook';
  instructions: string;
  executor: 'llm' | 'external';
  timeout: string;
  playbook: PlaybookChoice;
  feedback: boolean;
  emails: string;
  endpoints: string[];
}

const EMPTY: Draft = {
  name: '',
  severities: '',
  matchers: '',
  sources: [],
  follows: 'instructions',
  instructions: '',
  executor: 'llm',
  timeout: '3600',
  playbook: NO_PLAYBOOK,
  feedback: false,
  emails: '',
  endpoints: [],
};

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

const list = (text: string, by: RegExp) =>
  text
    .split(by)
    .map((s) => s.trim())
    .filter(Boolean);

export const matcherText = (m: Matcher) => `${m.label}${m.op}${m.value}`;

function draftOf(r: AlertRule): Draft {
  const p = r.action.playbook;
  return {
    name: r.name,
    severities: r.severities.join(', '),
    matchers: r.matchers.map(matcherText).join('\n'),
    sources: r.source_ids,
    follows: p ? 'playbook' : 'instructions',
    instructions: r.action.instructions,
    executor: r.action.executor,
    timeout: String(r.action.timeout_seconds),
    playbook: p ? choiceOf(p.id, p.version, p.inputs) : NO_PLAYBOOK,
    feedback: p?.brain_feedback ?? false,
    emails: r.notifications.emails.join('\n'),
    endpoints: r.notifications.webhook_endpoint_ids,
  };
}

/** The draft as the API's rule body (a matcher or playbook input that is none throws, naming it). */
function bodyOf(d: Draft) {
  const playbook = d.follows === 'playbook' ? { ...choiceBody(d.playbook), brain_feedback: d.feedback } : null;
  return {
    name: d.name,
    severities: list(d.severities, /,/),
    matchers: parseMatchers(d.matchers),
    source_ids: d.sources,
    action: {
      type: 'investigate',
      instructions: d.follows === 'playbook' ? '' : d.instructions,
      executor: d.executor,
      timeout_seconds: Number(d.timeout),
      playbook,
    },
    notifications: { emails: list(d.emails, /[\n,]/), webhook_endpoint_ids: d.endpoints },
  };
}

function Picks({
  legend,
  options,
  value,
  onChange,
}: {
  legend: string;
  options: { id: string; label: string }[];
  value: string[];
  onChange: (v: string[]) => void;
}) {
  return (
    <fieldset class="picks">
      <legend>{legend}</legend>
      {options.map((o) => (
        <label key={o.id}>
          <input
            type="checkbox"
            checked={value.includes(o.id)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...value, o.id] : value.filter((v) => v !== o.id))}
          />{' '}
          {o.label}
        </label>
      ))}
      {options.length === 0 && <span class="meta">none yet</span>}
    </fieldset>
  );
}

function RunFields({ d, set, choices }: { d: Draft; set: (patch: Partial<Draft>) => void; choices: RuleChoices }) {
  return (
    <>
      <fieldset class="choices">
        <legend>The investigation's run</legend>
        <label>
          <input type="radio" name="follows" checked={d.follows === 'instructions'} onChange={() => set({ follows: 'instructions' })} />{' '}
          follows instructions
        </label>
        <label>
          <input type="radio" name="follows" checked={d.follows === 'playbook'} onChange={() => set({ follows: 'playbook' })} /> runs a
          playbook
        </label>
      </fieldset>
      {d.follows === 'instructions' ? (
        <label>
          Instructions for the investigation's run
          <textarea rows={3} maxLength={20000} value={d.instructions} onInput={(e) => set({ instructions: e.currentTarget.value })} />
        </label>
      ) : (
        <>
          <PlaybookFields playbooks={choices.playbooks} choice={d.playbook} onChange={(playbook) => set({ playbook })} optionalInputs />
          <label class="check">
            <input type="checkbox" checked={d.feedback} onChange={(e) => set({ feedback: e.currentTarget.checked })} /> Report the run's
            outcome to the Brain
          </label>
        </>
      )}
      <label>
        Runs it{d.follows === 'playbook' ? ' (a version without steps)' : ''}
        <select value={d.executor} onChange={(e) => set({ executor: e.currentTarget.value as Draft['executor'] })}>
          <option value="llm">the platform's LLM runner</option>
          <option value="external">an external agent</option>
        </select>
      </label>
      <label>
        Time limit of the run (seconds)
        <input type="number" min={1} max={86400} required value={d.timeout} onInput={(e) => set({ timeout: e.currentTarget.value })} />
      </label>
    </>
  );
}

export function RuleForm({
  rule,
  choices,
  submit,
  label,
  busy,
  problem,
}: {
  /** The rule changed; none to add one. */
  rule?: AlertRule;
  choices: RuleChoices;
  /** Sends the body; resolves true when the form is to be emptied. */
  submit: (body: ReturnType<typeof bodyOf>) => Promise<boolean>;
  label: string;
  busy: boolean;
  problem?: ProblemDocument;
}) {
  const [d, setD] = useState<Draft>(rule ? draftOf(rule) : EMPTY);
  const [local, setLocal] = useState<ProblemDocument>();
  const set = (patch: Partial<Draft>) => setD((old) => ({ ...old, ...patch }));
  const send = async (e: Event) => {
    e.preventDefault();
    setLocal(undefined);
    let body: ReturnType<typeof bodyOf>;
    try {
      body = bodyOf(d);
    } catch (err) {
      setLocal({ type: 'about:blank', title: 'Check the rule', status: 0, detail: (err as Error).message });
      return;
    }
    if (await submit(body)) setD(EMPTY);
  };
  return (
    <form onSubmit={send} class="stacked-form" aria-label={label}>
      <label>
        Rule name
        <input required maxLength={200} value={d.name} onInput={(e) => set({ name: e.currentTarget.value })} />
      </label>
      <label>
        Severities (comma-separated; empty for any)
        <input value={d.severities} onInput={(e) => set({ severities: e.currentTarget.value })} placeholder="critical, warning" />
      </label>
      <label>
        Label matchers (one a line; all must hold)
        <textarea
          rows={3}
          class="code"
          value={d.matchers}
          onInput={(e) => set({ matchers: e.currentTarget.value })}
          placeholder="service=checkout"
        />
      </label>
      <Picks
        legend="Sources (none checked: any)"
        options={choices.sources.map((s) => ({ id: s.id, label: s.name }))}
        value={d.sources}
        onChange={(sources) => set({ sources })}
      />
      <RunFields d={d} set={set} choices={choices} />
      <label>
        E-mail when it opens an investigation and when the run ends (one address a line)
        <textarea rows={2} value={d.emails} onInput={(e) => set({ emails: e.currentTarget.value })} />
      </label>
      <Picks
        legend="Webhook endpoints told of it"
        options={choices.endpoints.map((e) => ({ id: e.id, label: e.description ? `${e.description} (${e.url})` : e.url }))}
        value={d.endpoints}
        onChange={(endpoints) => set({ endpoints })}
      />
      <button type="submit" disabled={busy}>
        {label}
      </button>
      <ProblemAlert problem={local ?? problem} />
    </form>
  );
}
