// Editing a memory: title, content and tags, written only at the version shown (expected_version),
// so that an edit never overwrites a change someone made meanwhile; that refusal (412) is said in
// words with what to do next.
import { useState } from 'preact/hooks';
import { ApiProblem } from '../api.ts';
import { useSession } from '../session.tsx';
import { ProblemAlert, useAction } from '../ui.tsx';
import type { Memory } from './memory-types.ts';

/** A 412 from the update, as the person editing needs to hear it. */
function conflictOf(err: unknown, memory: Memory): never {
  if (err instanceof ApiProblem && err.problem.status === 412) {
    throw new ApiProblem({
      ...err.problem,
      title: 'Not saved: this memory changed while you were editing it',
      detail: `You edited version ${memory.version}, and someone has written a newer one since. Copy your text, reload the memories, and edit the newest version. (${err.problem.detail ?? ''})`,
    });
  }
  throw err;
}

/** `saved` is told the notice once the edit is stored (the form then closes, its card says it). */
export function EditMemory({ path, memory, saved }: { path: string; memory: Memory; saved: (notice: string) => void }) {
  const { api } = useSession();
  const [title, setTitle] = useState(memory.title);
  const [content, setContent] = useState(memory.content);
  const [tags, setTags] = useState(memory.tags.join(', '));
  const action = useAction(() => {});
  const id = `edit-${memory.namespace}-${memory.key}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const save = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const body = {
        title,
        content,
        tags: tags
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
        entities: memory.entities,
        expected_version: memory.version,
      };
      await api.call('PUT', path, { body }).catch((err) => conflictOf(err, memory));
      saved(`Memory ${memory.key} saved.`);
      return '';
    });
  };
  return (
    <form onSubmit={save} class="stacked-form" aria-label={`Edit ${memory.key}`}>
      <label for={`${id}-title`}>Title</label>
      <input id={`${id}-title`} maxLength={300} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
      <label for={`${id}-content`}>Content</label>
      <textarea id={`${id}-content`} required rows={6} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
      <label for={`${id}-tags`}>Tags (comma-separated)</label>
      <input id={`${id}-tags`} value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
      <p class="meta">Saves over version {memory.version} only.</p>
      <button type="submit" disabled={action.busy}>
        Save {memory.key}
      </button>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </form>
  );
}
