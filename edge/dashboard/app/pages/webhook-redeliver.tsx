// Sending an endpoint's failed deliveries again, every one whose event happened in a time range
// (after an outage of the receiver, say): confirmed, then how many were queued again.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { confirmed, ProblemAlert, useAction } from '../ui.tsx';

/** datetime-local's value for `ms`, in local time. */
function local(ms: number): string {
  const d = new Date(ms);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export function RedeliverRange({ path, requeued }: { path: string; requeued: () => void }) {
  const { api } = useSession();
  const [since, setSince] = useState(() => local(Date.now() - 86_400_000));
  const [until, setUntil] = useState('');
  const action = useAction(requeued);
  const send = (e: Event) => {
    e.preventDefault();
    const range = `from ${new Date(since).toLocaleString()}${until ? ` to ${new Date(until).toLocaleString()}` : ' until now'}`;
    if (!confirmed(`Send every failed delivery of events ${range} again?`)) return;
    void action.run(async () => {
      const body = { since: new Date(since).toISOString(), ...(until ? { until: new Date(until).toISOString() } : {}) };
      const { data } = await api.call<{ requeued: number }>('POST', `${path}/redeliver`, { body });
      return `${data.requeued} failed deliver${data.requeued === 1 ? 'y' : 'ies'} queued again.`;
    });
  };
  return (
    <details>
      <summary>Redeliver failed deliveries over a time range</summary>
      <form onSubmit={send} class="inline-form">
        <label>
          Events from
          <input type="datetime-local" required value={since} onInput={(e) => setSince(e.currentTarget.value)} />
        </label>
        <label>
          Until (empty: now)
          <input type="datetime-local" value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={action.busy}>
          Redeliver the failed ones
        </button>
      </form>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </details>
  );
}
