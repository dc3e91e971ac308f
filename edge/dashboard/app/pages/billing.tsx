// Billing: the plan in force (with the trial), usage against the plan's limits, the plans with
// their prices in the organization's currency, and for owners: a change of plan or interval, a
// checkout for a paid plan (the browser follows the payment page's URL the API answers), cancel at
// the end of the period and resume; invoices for owners and admins.
import { useState } from 'preact/hooks';
import { can } from '../roles.ts';
import { useSession } from '../session.tsx';
import { confirmed, MoreButton, Page, ProblemAlert, useAction, usePaged, useResource, when } from '../ui.tsx';

interface Entitlements {
  entity_graph: boolean;
  webhook_events_per_month: number;
  max_memories: number;
  max_members: number | null;
  api_requests_per_minute: number;
  runs_per_month: number;
}

interface Price {
  currency: string;
  unit_amount: number;
}

interface Plan {
  key: 'starter' | 'professional';
  name: string;
  description: string;
  trial_days: number;
  prices: { month: Price; year: Price };
  entitlements: Entitlements;
}

interface Subscription {
  plan: string;
  plan_name: string;
  status: 'trialing' | 'active' | 'past_due';
  interval: 'month' | 'year' | null;
  unit_amount: number | null;
  currency: string | null;
  entity: string | null;
  trial_end: string | null;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
  payment_method_on_file: boolean;
}

interface Invoice {
  id: string;
  status: string;
  currency: string;
  amount_due: number;
  amount_paid: number;
  lines: { description: string; amount: number }[];
  period_start: string | null;
  period_end: string | null;
  due_at: string | null;
  hosted_url: string | null;
}

interface Quantity {
  used: number;
  limit: number | null;
}

export function money(amount: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount / 100);
}

const limitOf = (q: Quantity) =>
  `${q.used.toLocaleString()} of ${q.limit === null || q.limit === 0 ? 'no limit' : q.limit.toLocaleString()}`;

function CurrentPlan({ subscription: s, path, after }: { subscription: Subscription; path: string; after: () => void }) {
  const { api, organization } = useSession();
  const action = useAction(after);
  const mayChange = can(organization.role, 'cancelSubscription');
  const paid = s.plan !== 'starter';
  const cancel = () => {
    if (
      !confirmed(`Cancel ${s.plan_name}? It stays until ${when(s.trial_end ?? s.current_period_end)}, then the organization is on Starter.`)
    )
      return;
    void action.run(async () => {
      await api.call('POST', `${path}/subscription/cancel`);
      return `${s.plan_name} ends at the end of the period.`;
    });
  };
  const resume = () =>
    void action.run(async () => {
      await api.call('POST', `${path}/subscription/resume`);
      return `${s.plan_name} goes on.`;
    });
  return (
    <section aria-labelledby="plan-title">
      <h2 id="plan-title">Your plan</h2>
      <dl class="facts" data-testid="subscription">
        <dt>Plan</dt>
        <dd>
          {s.plan_name} ({s.status === 'past_due' ? 'payment past due' : s.status})
        </dd>
        {s.status === 'trialing' && s.trial_end && (
          <>
            <dt>Trial ends</dt>
            <dd>{when(s.trial_end)}</dd>
          </>
        )}
        {s.unit_amount !== null && s.currency && (
          <>
            <dt>Price</dt>
            <dd>
              {money(s.unit_amount, s.currency)} per {s.interval}, billed by the {s.entity} entity
            </dd>
          </>
        )}
        <dt>Current period ends</dt>
        <dd>{when(s.current_period_end)}</dd>
        <dt>Renewal</dt>
        <dd>{s.cancel_at_period_end ? 'cancelled: ends at the end of the period' : paid ? 'renews' : '—'}</dd>
      </dl>
      {mayChange && paid && !s.cancel_at_period_end && (
        <button type="button" class="danger" onClick={cancel}>
          Cancel at the end of the period
        </button>
      )}
      {mayChange && s.cancel_at_period_end && (
        <button type="button" onClick={resume}>
          Resume {s.plan_name}
        </button>
      )}
      <ProblemAlert problem={action.problem} />
      <p role="status">{action.notice}</p>
    </section>
  );
}

function Usage({ path, entitlements }: { path: string; entitlements: Entitlements }) {
  const usage = useResource<{ memories: Quantity; members: Quantity; runs: Quantity; api_calls: Quantity }>(`${path}/usage`);
  const hooks = useResource<{ limit: number; published: number; dropped: number; dropped_reason: string | null }>(`${path}/webhook-usage`);
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage against the plan</h2>
      <ProblemAlert problem={usage.problem ?? hooks.problem} />
      <dl class="facts" data-testid="usage">
        {usage.data && (
          <>
            <dt>Memories</dt>
            <dd>{limitOf(usage.data.memories)}</dd>
            <dt>Members (with pending invitations)</dt>
            <dd>{limitOf(usage.data.members)}</dd>
            <dt>Runs queued this month</dt>
            <dd>{limitOf(usage.data.runs)}</dd>
            <dt>API calls this month</dt>
            <dd>{limitOf(usage.data.api_calls)}</dd>
          </>
        )}
        {hooks.data && (
          <>
            <dt>Webhook events this month</dt>
            <dd>
              {limitOf({ used: hooks.data.published, limit: hooks.data.limit })}
              {hooks.data.dropped_reason && ` (${hooks.data.dropped} dropped: ${hooks.data.dropped_reason})`}
            </dd>
          </>
        )}
        <dt>Runs a month</dt>
        <dd>{entitlements.runs_per_month.toLocaleString()}</dd>
        <dt>API requests a minute</dt>
        <dd>{entitlements.api_requests_per_minute.toLocaleString()}</dd>
        <dt>Entity graph</dt>
        <dd>{entitlements.entity_graph ? 'included' : 'not included'}</dd>
      </dl>
    </section>
  );
}

function Invoices({ path }: { path: string }) {
  const invoices = usePaged<Invoice>(`${path}/invoices`, 'invoices');
  return (
    <section aria-labelledby="invoices-title">
      <h2 id="invoices-title">Invoices</h2>
      <ProblemAlert problem={invoices.problem} />
      <table>
        <caption>Invoices, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Period</th>
            <th scope="col">Lines</th>
            <th scope="col">Amount due</th>
            <th scope="col">Status</th>
            <th scope="col">Due</th>
          </tr>
        </thead>
        <tbody>
          {invoices.items.map((i) => (
            <tr key={i.id}>
              <td>
                {when(i.period_start)} – {when(i.period_end)}
              </td>
              <td>
                {i.lines.map((l) => (
                  <div key={l.description}>
                    {l.description}: {money(l.amount, i.currency)}
                  </div>
                ))}
              </td>
              <td>{money(i.amount_due, i.currency)}</td>
              <td>{i.hosted_url ? <a href={i.hosted_url}>{i.status}</a> : i.status}</td>
              <td>{when(i.due_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!invoices.loading && invoices.items.length === 0 && !invoices.problem && <p>No invoices yet.</p>}
      <MoreButton paged={invoices} label="Older invoices" />
    </section>
  );
}

function Plans({ path, subscription, after }: { path: string; subscription: Subscription; after: () => void }) {
  const { api, settings, organization } = useSession();
  const plans = useResource<{ plans: Plan[]; currency: string }>('/billing/plans');
  const [interval, setCadence] = useState<'month' | 'year'>('month');
  const [country, setCountry] = useState('');
  const action = useAction(after);
  const mayBuy = can(organization.role, 'createCheckout');
  const choose = (p: Plan) =>
    void action.run(async () => {
      // A paid plan needs a checkout unless one completed already; then it is a change of plan.
      if (p.key === 'starter' || subscription.payment_method_on_file) {
        await api.call('PATCH', `${path}/subscription`, { body: p.key === 'starter' ? { plan: p.key } : { plan: p.key, interval } });
        return `Plan changed to ${p.name}.`;
      }
      const back = `${location.origin}${settings.basePath}/billing`;
      const { data } = await api.call<{ url: string }>('POST', `${path}/checkouts`, {
        body: { plan: p.key, interval, ...(country ? { billing_address: { country } } : {}), success_url: back, cancel_url: back },
        idempotencyKey: crypto.randomUUID(),
      });
      location.assign(data.url);
      return 'Taking you to the payment page…';
    });
  return (
    <section aria-labelledby="plans-title">
      <h2 id="plans-title">Plans</h2>
      <ProblemAlert problem={plans.problem ?? action.problem} />
      <p role="status">{action.notice}</p>
      {mayBuy && (
        <div class="inline-form">
          <label>
            Billing interval
            <select value={interval} onChange={(e) => setCadence(e.currentTarget.value as 'month' | 'year')}>
              <option value="month">monthly</option>
              <option value="year">yearly</option>
            </select>
          </label>
          <label>
            Billing address country (two letters)
            <input maxLength={2} size={4} value={country} onInput={(e) => setCountry(e.currentTarget.value.toUpperCase())} />
          </label>
        </div>
      )}
      <table>
        <caption>Plans, prices in {plans.data?.currency ?? '…'}</caption>
        <thead>
          <tr>
            <th scope="col">Plan</th>
            <th scope="col">Monthly</th>
            <th scope="col">Yearly</th>
            <th scope="col">Includes</th>
            {mayBuy && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {plans.data?.plans.map((p) => (
            <tr key={p.key}>
              <td>
                <strong>{p.name}</strong> {p.trial_days > 0 && `(${p.trial_days}-day trial)`}
                <div class="meta">{p.description}</div>
              </td>
              <td>{money(p.prices.month.unit_amount, p.prices.month.currency)}</td>
              <td>{money(p.prices.year.unit_amount, p.prices.year.currency)}</td>
              <td>
                {p.entitlements.max_memories.toLocaleString()} memories, {p.entitlements.max_members ?? 'unlimited'} members,{' '}
                {p.entitlements.runs_per_month.toLocaleString()} runs a month
              </td>
              {mayBuy && (
                <td>
                  {(p.key !== subscription.plan || subscription.status === 'trialing') && (
                    <button type="button" disabled={action.busy} onClick={() => choose(p)}>
                      Choose {p.name}
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function BillingPage() {
  const { organization } = useSession();
  const path = `/organizations/${organization.organization_id}`;
  const [version, setVersion] = useState(0);
  const subscription = useResource<Subscription & { entitlements: Entitlements }>(`${path}/subscription`, version);
  const after = () => setVersion((v) => v + 1);
  const s = subscription.data;
  return (
    <Page title="Billing">
      <ProblemAlert problem={subscription.problem} />
      {s && <CurrentPlan subscription={s} path={path} after={after} />}
      {s && <Usage path={path} entitlements={s.entitlements} />}
      {s && <Plans path={path} subscription={s} after={after} />}
      {can(organization.role, 'listInvoices') && <Invoices key={version} path={path} />}
    </Page>
  );
}
