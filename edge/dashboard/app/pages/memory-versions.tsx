// A memory's version history, newest first, page by page: each version's text, who wrote it and
// when, and whether a later write replaced it or a deletion removed it.
import { MoreButton, ProblemAlert, usePaged, when } from '../ui.tsx';
import type { Memory } from './memory-types.ts';

interface Writer {
  client_id: string;
  user_id: string;
  client_name: string;
}

interface Version {
  version: number;
  state: 'current' | 'replaced' | 'deleted';
  memory: Memory;
  ended_at: string | null;
  ended_by: Writer | null;
}

const who = (w: Writer | null | undefined) => (w ? w.client_name || w.client_id || 'unknown' : 'unknown');

function stateOf(v: Version): string {
  if (v.state === 'current') return 'current';
  const verb = v.state === 'deleted' ? 'deleted' : 'replaced';
  return `${verb} ${when(v.ended_at)} by ${who(v.ended_by)}`;
}

export function MemoryVersions({ path, memory }: { path: string; memory: Memory }) {
  const versions = usePaged<Version>(`${path}/versions?page_size=10`, 'versions');
  return (
    <section class="versions" aria-label={`Versions of ${memory.key}`}>
      <h3>Versions of {memory.key}</h3>
      <ProblemAlert problem={versions.problem} />
      <ol>
        {versions.items.map((v) => (
          <li key={`${v.version}-${v.memory.updated_at}`}>
            <p class="meta">
              Version {v.version} · written {when(v.memory.updated_at)} by {who(v.memory.written_by)} · {stateOf(v)}
            </p>
            {v.memory.title && <p>{v.memory.title}</p>}
            <p class="content">{v.memory.content}</p>
          </li>
        ))}
      </ol>
      <MoreButton paged={versions} label="Older versions" />
    </section>
  );
}
