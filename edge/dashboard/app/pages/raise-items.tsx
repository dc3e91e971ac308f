// Raising items by hand on the queue of contradictions and questions: flagging that memories
// disagree (two to ten, named as namespace/key, and why), and asking a question the organization
// cannot answer yet, optionally about memories and entities. The API's 404 names a memory that
// does not exist; a contradiction already open over the same memories is answered, not repeated.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';

/** `knowledge/services/checkout` lines as the API's memory references. */
function memoriesOf(text: string): { namespace: string; key: string }[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const at = l.indexOf('/');
      if (at < 0) throw new Error(`“${l}” is not namespace/key (knowledge/… or episodes/…)`);
      return { namespace: l.slice(0, at), key: l.slice(at + 1) };
    });
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

export function FlagContradiction({ base, raised }: { base: string; raised: () => void }) {
  const { api } = useSession();
  const [memories, setMemories] = useState('');
  const [reason, setReason] = useState('');
  const action = useAction(raised);
  const flag = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const { status, data } = await api.call<{ id: string }>('POST', `${base}/contradictions`, {
        body: { memories: memoriesOf(memories), reason },
        idempotencyKey: crypto.randomUUID(),
      });
      setMemories('');
      setReason('');
      return status === 201 ? `Contradiction ${data.id} flagged.` : `Contradiction ${data.id} was already open over these memories.`;
    });
  };
  return (
    <details>
      <summary>Flag a contradiction</summary>
      <form onSubmit={flag} class="stacked-form">
        <label>
          Memories that disagree, one a line as namespace/key (2 to 10)
          <textarea required rows={3} value={memories} onInput={(e) => setMemories(e.currentTarget.value)} />
        </label>
        <label>
          Why they disagree
          <textarea required rows={2} maxLength={2000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Flag the contradiction
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}

export function AskQuestion({ base, raised }: { base: string; raised: () => void }) {
  const { api } = useSession();
  const [question, setQuestion] = useState('');
  const [memories, setMemories] = useState('');
  const [entities, setEntities] = useState('');
  const action = useAction(raised);
  const ask = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = {
        question,
        ...(memories.trim() ? { memories: memoriesOf(memories) } : {}),
        ...(entities.trim() ? { entities: lines(entities) } : {}),
      };
      const { data } = await api.call<{ id: string }>('POST', `${base}/questions`, { body, idempotencyKey: crypto.randomUUID() });
      setQuestion('');
      setMemories('');
      setEntities('');
      return `Question ${data.id} asked.`;
    });
  };
  return (
    <details>
      <summary>Ask a question</summary>
      <form onSubmit={ask} class="stacked-form">
        <label>
          Question
          <textarea required rows={2} maxLength={2000} value={question} onInput={(e) => setQuestion(e.currentTarget.value)} />
        </label>
        <label>
          About memories, one a line as namespace/key (optional)
          <textarea rows={2} value={memories} onInput={(e) => setMemories(e.currentTarget.value)} />
        </label>
        <label>
          About entities, one a line (optional)
          <textarea rows={2} value={entities} onInput={(e) => setEntities(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Ask the question
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}
