// What a scheduled job starts at each occurrence, as form fields: a run on a new thread (title,
// first message, instructions, who runs it), a run of a playbook (the published or a pinned
// version, its inputs), or a seeding run of the Brain from a web page (URL, namespace, key prefix,
// tags). Used to schedule a job (jobs.tsx) and to change one (job.tsx).
import { useSession } from '../session.tsx';
import { usePaged } from '../ui.tsx';
import { choiceBody, choiceOf, NO_PLAYBOOK, type PlaybookChoice, PlaybookFields } from './playbook-choice.tsx';
import type { Playbook } from './playbooks.tsx';

type Executor = 'llm' | 'external';

export type JobTarget =
  | { type: 'run'; title_template: string; message: string; instructions: string; executor: Executor; timeout_seconds: number }
  | {
      type: 'playbook';
      playbook_id: string;
      version: number | null;
      inputs: Record<string, unknown>;
      title_template: string;
      executor: Executor;
      timeout_seconds: number;
      brain_feedback: boolean;
    }
  | { type: 'seeding'; url: string; namespace: 'knowledge' | 'episodes'; key_prefix: string; tags: string[] };

export interface TargetDraft {
  type: JobTarget['type'];
  title: string;
  message: string;
  instructions: string;
  executor: Executor;
  playbook: PlaybookChoice;
  feedback: boolean;
  url: string;
  namespace: 'knowledge' | 'episodes';
  keyPrefix: string;
  tags: string;
  /** Seconds, or '' for the default. */
  timeout: string;
}

export const NEW_TARGET: TargetDraft = {
  type: 'run',
  title: '',
  message: '',
  instructions: '',
  executor: 'llm',
  playbook: NO_PLAYBOOK,
  feedback: false,
  url: '',
  namespace: 'knowledge',
  keyPrefix: '',
  tags: '',
  timeout: '',
};

export function targetDraft(t: JobTarget): TargetDraft {
  switch (t.type) {
    case 'run':
      return {
        ...NEW_TARGET,
        title: t.title_template,
        message: t.message,
        instructions: t.instructions,
        executor: t.executor,
        timeout: String(t.timeout_seconds || ''),
      };
    case 'playbook':
      return {
        ...NEW_TARGET,
        type: 'playbook',
        title: t.title_template,
        executor: t.executor,
        playbook: choiceOf(t.playbook_id, t.version, t.inputs),
        feedback: t.brain_feedback,
        timeout: String(t.timeout_seconds || ''),
      };
    case 'seeding':
      return { ...NEW_TARGET, type: 'seeding', url: t.url, namespace: t.namespace, keyPrefix: t.key_prefix, tags: t.tags.join(', ') };
  }
}

/** The draft as the API's target (fields left empty are left out, so the API's defaults apply). */
export function targetBody(d: TargetDraft): object {
  const some = (field: string, value: string) => (value ? { [field]: value } : {});
  const timeout = d.timeout ? { timeout_seconds: Number(d.timeout) } : {};
  switch (d.type) {
    case 'run':
      return {
        type: 'run',
        title_template: d.title,
        executor: d.executor,
        ...some('message', d.message),
        ...some('instructions', d.instructions),
        ...timeout,
      };
    case 'playbook': {
      const { id, version, inputs } = choiceBody(d.playbook);
      return {
        type: 'playbook',
        playbook_id: id,
        version,
        inputs,
        executor: d.executor,
        brain_feedback: d.feedback,
        ...some('title_template', d.title),
        ...timeout,
      };
    }
    case 'seeding': {
      const tags = d.tags
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      return { type: 'seeding', url: d.url, namespace: d.namespace, key_prefix: d.keyPrefix, tags };
    }
  }
}

/** Who runs it and for how long at most. */
function ExecutorField({ d, set, note }: { d: TargetDraft; set: (p: Partial<TargetDraft>) => void; note: string }) {
  return (
    <>
      <label>
        Runs it{note}
        <select value={d.executor} onChange={(e) => set({ executor: e.currentTarget.value as Executor })}>
          <option value="llm">the platform's LLM runner</option>
          <option value="external">an external agent</option>
        </select>
      </label>
      <label>
        Time limit of the run (seconds; empty: the default)
        <input type="number" min={1} max={86400} value={d.timeout} onInput={(e) => set({ timeout: e.currentTarget.value })} />
      </label>
    </>
  );
}

function RunTarget({ d, set }: { d: TargetDraft; set: (p: Partial<TargetDraft>) => void }) {
  return (
    <>
      <label>
        Investigation title ({'{occurrence}'} becomes the time)
        <input required maxLength={200} value={d.title} onInput={(e) => set({ title: e.currentTarget.value })} />
      </label>
      <label>
        First message
        <textarea rows={3} value={d.message} onInput={(e) => set({ message: e.currentTarget.value })} />
      </label>
      <label>
        Instructions for the run (empty: the runner's own)
        <textarea rows={2} maxLength={20000} value={d.instructions} onInput={(e) => set({ instructions: e.currentTarget.value })} />
      </label>
      <ExecutorField d={d} set={set} note="" />
    </>
  );
}

function PlaybookTarget({ d, set }: { d: TargetDraft; set: (p: Partial<TargetDraft>) => void }) {
  const { organization } = useSession();
  const playbooks = usePaged<Playbook>(`/organizations/${organization.organization_id}/playbooks?page_size=100`, 'playbooks');
  return (
    <>
      <PlaybookFields playbooks={playbooks.items} choice={d.playbook} onChange={(playbook) => set({ playbook })} />
      <label>
        Investigation title ({'{occurrence}'} becomes the time; empty: the playbook's name and the time)
        <input maxLength={200} value={d.title} onInput={(e) => set({ title: e.currentTarget.value })} />
      </label>
      <ExecutorField d={d} set={set} note=" (a version without steps)" />
      <label class="check">
        <input type="checkbox" checked={d.feedback} onChange={(e) => set({ feedback: e.currentTarget.checked })} /> Report each run's
        outcome to the Brain
      </label>
    </>
  );
}

function SeedingTarget({ d, set }: { d: TargetDraft; set: (p: Partial<TargetDraft>) => void }) {
  return (
    <>
      <label>
        Page to seed from (http or https URL)
        <input required type="url" maxLength={2000} value={d.url} onInput={(e) => set({ url: e.currentTarget.value })} />
      </label>
      <label>
        Namespace written
        <select value={d.namespace} onChange={(e) => set({ namespace: e.currentTarget.value as TargetDraft['namespace'] })}>
          <option value="knowledge">knowledge</option>
          <option value="episodes">episodes</option>
        </select>
      </label>
      <label>
        Key prefix
        <input maxLength={100} value={d.keyPrefix} onInput={(e) => set({ keyPrefix: e.currentTarget.value })} placeholder="runbooks/" />
      </label>
      <label>
        Tags (comma-separated)
        <input value={d.tags} onInput={(e) => set({ tags: e.currentTarget.value })} />
      </label>
    </>
  );
}

export function TargetFields({ d, set }: { d: TargetDraft; set: (p: Partial<TargetDraft>) => void }) {
  return (
    <>
      <label>
        Each occurrence starts
        <select value={d.type} onChange={(e) => set({ type: e.currentTarget.value as TargetDraft['type'] })}>
          <option value="run">a run on a new investigation</option>
          <option value="playbook">a run of a playbook</option>
          <option value="seeding">a seeding run of the Brain from a page</option>
        </select>
      </label>
      {d.type === 'run' && <RunTarget d={d} set={set} />}
      {d.type === 'playbook' && <PlaybookTarget d={d} set={set} />}
      {d.type === 'seeding' && <SeedingTarget d={d} set={set} />}
    </>
  );
}
