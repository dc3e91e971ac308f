// A seeding run's items in source order, by outcome, each with where it came from, its key (a
// link to the memory once stored) and why it was rejected, skipped or failed; in review, members
// approve the items they tick, or all waiting, and reject them (confirmed, with a reason).
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, ProblemAlert, useAction, usePaged } from '../ui.tsx';
import { memoryHref } from './investigation-links.tsx';
import { finished, type SeedingRun } from './seeding.tsx';

export interface SeedingItem {
  index: number;
  outcome: string;
  namespace: string;
  key: string;
  title: string;
  content: string;
  tags: string[];
  origin: string;
  reason: string;
  seq: number;
}

const OUTCOMES = [
  'awaiting_review',
  'stored',
  'duplicate',
  'contradiction',
  'unchanged',
  'approved',
  'rejected',
  'failed',
  'skipped',
  'pending',
];

/**
 * The review's controls, with the answer to the last decision. They stay (disabled) once the run
 * has left review, so the answer to the decision that ended it is still read.
 */
function Review({ path, chosen, open, done }: { path: string; chosen: number[]; open: boolean; done: () => void }) {
  const { api } = useSession();
  const [reason, setReason] = useState('');
  const action = useAction(done);
  const review = (decision: 'approve' | 'reject', all: boolean) => {
    const which = all ? 'every item waiting' : `${chosen.length} item(s)`;
    if (decision === 'reject' && !confirmed(`Reject ${which}? They are never written.`)) return;
    void action.run(async () => {
      const body = { decision, ...(all ? { all: true } : { indexes: chosen }), ...(reason ? { reason } : {}) };
      const { data } = await api.call<{ decided: number }>('POST', `${path}/review`, { body });
      setReason('');
      return `${data.decided} item(s) ${decision === 'approve' ? 'approved' : 'rejected'}.`;
    });
  };
  return (
    <fieldset class="group">
      <legend>Review</legend>
      <label>
        Reason (kept on rejected items)
        <input maxLength={1000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      </label>
      <p class="actions">
        <button type="button" disabled={!open || action.busy || chosen.length === 0} onClick={() => review('approve', false)}>
          Approve the ticked items
        </button>
        <button type="button" class="danger" disabled={!open || action.busy || chosen.length === 0} onClick={() => review('reject', false)}>
          Reject the ticked items
        </button>
        <button type="button" disabled={!open || action.busy} onClick={() => review('approve', true)}>
          Approve all waiting
        </button>
      </p>
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </fieldset>
  );
}

export function SeedingItems({ path, run, version, reviewed }: { path: string; run: SeedingRun; version: number; reviewed: () => void }) {
  const { settings, organization } = useSession();
  const [outcome, setOutcome] = useState('');
  const [chosen, setChosen] = useState<number[]>([]);
  const items = usePaged<SeedingItem>(`${path}/items?page_size=50${outcome ? `&outcome=${outcome}` : ''}`, 'items', version);
  const reviewer = run.review && can(organization.role, 'reviewSeedingItems');
  const mayReview = reviewer && !finished(run);
  const tick = (index: number, on: boolean) => setChosen(on ? [...chosen, index] : chosen.filter((i) => i !== index));
  return (
    <section aria-labelledby="items-title">
      <h2 id="items-title">Items</h2>
      <div class="inline-form">
        <label>
          Outcome
          <select value={outcome} onChange={(e) => setOutcome(e.currentTarget.value)}>
            <option value="">any</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
      </div>
      {reviewer && (
        <Review
          path={path}
          chosen={chosen}
          open={mayReview}
          done={() => {
            setChosen([]);
            reviewed();
          }}
        />
      )}
      <ProblemAlert problem={items.problem} />
      <table>
        <caption>Items in source order</caption>
        <thead>
          <tr>
            {mayReview && <th scope="col">Pick</th>}
            <th scope="col">#</th>
            <th scope="col">Outcome</th>
            <th scope="col">Memory</th>
            <th scope="col">Content</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {items.items.map((i) => (
            <tr key={i.index}>
              {mayReview && (
                <td>
                  {i.outcome === 'awaiting_review' && (
                    <input
                      type="checkbox"
                      aria-label={`Pick item ${i.index}`}
                      checked={chosen.includes(i.index)}
                      onChange={(e) => tick(i.index, e.currentTarget.checked)}
                    />
                  )}
                </td>
              )}
              <td>{i.index}</td>
              <td>
                {i.outcome.replace('_', ' ')}
                {i.reason && `: ${i.reason}`}
              </td>
              <td>
                {i.outcome === 'stored' ? (
                  <a href={memoryHref(settings.basePath, i.namespace, i.key)}>{i.title || i.key}</a>
                ) : (
                  i.title || i.key
                )}{' '}
                <code>
                  {i.namespace}/{i.key}
                </code>
              </td>
              <td class="content">{i.content}</td>
              <td>{i.origin}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!items.loading && items.items.length === 0 && !items.problem && <p>No items{outcome ? ` ${outcome.replace('_', ' ')}` : ''} yet.</p>}
      <MoreButton paged={items} label="More items" />
    </section>
  );
}
