// Recording by hand whether a memory worked in use (what agents report after using one): worked or
// failed, with a note; the Brain ranks it accordingly and warns of one that failed.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';
import type { Memory } from './memory-types.ts';

interface FeedbackResult {
  updated: { namespace: string; key: string; worked: number; failed: number }[];
  missing: string[];
}

export function MemoryFeedback({ base, memory, recorded }: { base: string; memory: Memory; recorded: (said: string) => void }) {
  const { api } = useSession();
  const [outcome, setOutcome] = useState<'worked' | 'failed'>('worked');
  const [note, setNote] = useState('');
  const action = useAction(() => {});
  const record = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = { outcome, memories: [{ namespace: memory.namespace, key: memory.key }], ...(note ? { note } : {}) };
      const { data } = await api.call<FeedbackResult>('POST', `${base}/feedback`, { body });
      const counts = data.updated[0];
      const said = counts
        ? `Feedback recorded on ${memory.key}: worked ${counts.worked}, failed ${counts.failed}.`
        : `${memory.key} no longer exists: no feedback recorded.`;
      recorded(said);
      return said;
    });
  };
  const id = `feedback-${memory.namespace}-${memory.key}`;
  return (
    <form onSubmit={record} class="stacked-form" aria-label={`Feedback on ${memory.key}`}>
      <fieldset class="picks">
        <legend>In use, it</legend>
        <label>
          <input type="radio" name={id} checked={outcome === 'worked'} onChange={() => setOutcome('worked')} /> worked
        </label>
        <label>
          <input type="radio" name={id} checked={outcome === 'failed'} onChange={() => setOutcome('failed')} /> failed
        </label>
      </fieldset>
      <label>
        Note (optional)
        <input maxLength={1000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={action.busy}>
        Record the feedback
      </button>
      <ProblemAlert problem={action.problem} />
    </form>
  );
}
