// What an investigation is tied to: the alert events linked to its thread (those that opened or
// joined it) and the memories its runs wrote to the Brain, each linking to its own screen.
import { useSession } from '../session.tsx';
import { MoreButton, ProblemAlert, usePaged, when } from '../ui.tsx';
import type { AlertEvent } from './alerts.tsx';

interface ThreadMemory {
  namespace: 'knowledge' | 'episodes';
  key: string;
  version: number;
  run_id: string;
  step_index: number;
  created_at: string | null;
}

export function LinkedAlerts({ base, threadId }: { base: string; threadId: string }) {
  const { settings } = useSession();
  const alerts = usePaged<AlertEvent>(`${base}/alert-events?thread_id=${threadId}&page_size=20`, 'alert_events');
  if (!alerts.problem && alerts.items.length === 0) return null;
  return (
    <section aria-labelledby="alerts-title">
      <h2 id="alerts-title">Linked alerts</h2>
      <ProblemAlert problem={alerts.problem} />
      <table>
        <caption>Alerts of this investigation, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Alert</th>
            <th scope="col">Severity</th>
            <th scope="col">Status</th>
            <th scope="col">Times</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {alerts.items.map((a) => (
            <tr key={a.id}>
              <td>
                <a href={`${settings.basePath}/alerts/${a.id}`}>{a.title}</a>
              </td>
              <td>{a.severity || '—'}</td>
              <td>{a.status}</td>
              <td>{a.count}</td>
              <td>{when(a.last_seen_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <MoreButton paged={alerts} label="Older alerts" />
    </section>
  );
}

/** Where the Memories screen opens one memory. */
export function memoryHref(basePath: string, namespace: string, key: string): string {
  return `${basePath}/memories?${new URLSearchParams({ namespace, key })}`;
}

export function ThreadMemories({ path, version }: { path: string; version: number }) {
  const { settings } = useSession();
  const memories = usePaged<ThreadMemory>(`${path}/memories?page_size=50`, 'memories', version);
  return (
    <section aria-labelledby="memories-title">
      <h2 id="memories-title">Memories it wrote</h2>
      <ProblemAlert problem={memories.problem} />
      <ul data-testid="thread-memories">
        {memories.items.map((m) => (
          <li key={`${m.namespace}/${m.key}/${m.version}`}>
            <a href={memoryHref(settings.basePath, m.namespace, m.key)}>
              {m.namespace}/{m.key}
            </a>{' '}
            version {m.version}, by run <code>{m.run_id}</code> (step {m.step_index}), {when(m.created_at)}
          </li>
        ))}
      </ul>
      {!memories.loading && memories.items.length === 0 && !memories.problem && <p>No memories written yet.</p>}
      <MoreButton paged={memories} label="More memories" />
    </section>
  );
}
