// The manual provider's hosted checkout page, {web_url}/checkout/<checkout_id>: the plan, its price
// in the region first guessed, the trial before the first invoice, and the billing address country,
// which decides the region (EUR for the EU, the EEA, the UK and Switzerland; USD elsewhere).
// Submitting it completes the checkout (billing's CompleteManualCheckout); the unguessable checkout
// id is the capability, as a Stripe checkout URL is. No script: a form post and a redirect.
import { Code, ConnectError } from '@connectrpc/connect';
import type { Checkout } from '../../gen/mindgate/billing/v1/checkout_pb.js';
import { countryName, isCountry } from '../../services/billing/regions.ts';
import type { AppContext } from '../context.ts';
import { escapeHtml as e } from '../http/escape-html.ts';
import { pageSecurityHeaders } from '../http/page-headers.ts';
import { readBody } from '../http/respond.ts';
import type { RouteContext, Router } from '../http/router.ts';
import { checkoutJson } from '../api/billing-json.ts';

const CHECKOUT_ID = /^chk_[A-Za-z0-9]{24}$/;
const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  ...pageSecurityHeaders({ style: "'self'", formAction: "'self' http: https:" }),
};

/** Every ISO 3166-1 alpha-2 country, by English name. */
const COUNTRIES = (() => {
  const codes: string[] = [];
  for (let a = 65; a <= 90; a++) for (let b = 65; b <= 90; b++) codes.push(String.fromCharCode(a, b));
  return codes
    .filter(isCountry)
    .map((code) => ({ code, name: countryName(code) }))
    .sort((x, y) => x.name.localeCompare(y.name));
})();

export function formatMoney(minor: number, currency: string): string {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(minor / 100);
}

function page(res: RouteContext['res'], status: number, title: string, body: string): void {
  res.writeHead(status, HEADERS);
  res.end(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title><link rel="stylesheet" href="/assets/site.css"><meta name="robots" content="noindex"></head>
<body><main id="main"><div class="wrap">
<h1>${e(title)}</h1>
${body}
</div></main></body></html>
`);
}

function formBody(c: Checkout, error?: string): string {
  const json = checkoutJson(c);
  const cadence = json.interval === 'year' ? 'year' : 'month';
  const trial =
    json.trial_days > 0 && json.trial_end
      ? `<p><strong>${json.trial_days}-day trial:</strong> nothing is due until ${e(new Date(json.trial_end).toUTCString().slice(5, 16))}; the first invoice is issued then.</p>`
      : '<p>The first invoice is issued today.</p>';
  const options = COUNTRIES.map((k) => `<option value="${k.code}"${k.code === json.country ? ' selected' : ''}>${e(k.name)}</option>`).join(
    '',
  );
  return `${error ? `<p role="alert" class="status-outage">${e(error)}</p>` : ''}
<p class="lead">${e(formatMoney(json.unit_amount, json.currency))} per ${cadence}, billed by ${e(json.entity_name)}.</p>
${trial}
<p class="meta">Customers in the EU, the EEA, the United Kingdom and Switzerland are billed in EUR by the European entity; everyone else in USD. Your billing address decides.</p>
<form method="post" action="/checkout/${e(json.id)}">
<p><label for="billing_country">Billing address country</label><br>
<select id="billing_country" name="billing_country" required>${options}</select></p>
<p><button type="submit">Subscribe to ${e(json.plan === 'professional' ? 'Professional' : json.plan)}</button></p>
</form>
<p class="meta">Payment is arranged with the operator of this platform, who sends the invoices.</p>`;
}

async function load(ctx: AppContext, c: RouteContext): Promise<Checkout | undefined> {
  const id = c.params.checkout_id;
  try {
    if (!CHECKOUT_ID.test(id)) throw new ConnectError('no such checkout', Code.NotFound);
    return (await ctx.clients.checkouts.getCheckout({ organizationId: '', checkoutId: id })).checkout;
  } catch (err) {
    if (!(err instanceof ConnectError) || err.code !== Code.NotFound) throw err;
    page(c.res, 404, 'No such checkout', '<p>This checkout does not exist. Start a new one from your dashboard.</p>');
    return undefined;
  }
}

function closed(c: RouteContext, checkout: Checkout): boolean {
  const { status, provider } = checkoutJson(checkout);
  if (status === 'complete') page(c.res, 200, 'Subscribed', '<p>This checkout is complete: the subscription is active.</p>');
  else if (status === 'expired') page(c.res, 410, 'Checkout expired', '<p>This checkout has expired. Start a new one.</p>');
  else if (provider !== 'manual') {
    c.res.writeHead(303, { location: checkout.url, 'cache-control': 'no-store' });
    c.res.end();
  } else return false;
  return true;
}

export function registerCheckoutPages(router: Router, ctx: AppContext): void {
  router.get('/checkout/:checkout_id', async (c) => {
    const checkout = await load(ctx, c);
    if (!checkout || closed(c, checkout)) return;
    page(c.res, 200, `Subscribe to ${checkoutJson(checkout).plan === 'professional' ? 'Professional' : 'a plan'}`, formBody(checkout));
  });
  router.post('/checkout/:checkout_id', async (c) => {
    const checkout = await load(ctx, c);
    if (!checkout || closed(c, checkout)) return;
    const form = new URLSearchParams((await readBody(c.req, 16_384)).toString('utf8'));
    const country = form.get('billing_country') ?? '';
    try {
      await ctx.clients.checkouts.completeManualCheckout({ checkoutId: checkout.checkoutId, billingCountry: country });
    } catch (err) {
      if (!(err instanceof ConnectError) || (err.code !== Code.InvalidArgument && err.code !== Code.FailedPrecondition)) throw err;
      const status = err.code === Code.InvalidArgument ? 400 : 409;
      page(
        c.res,
        status,
        'Subscribe',
        formBody(checkout, err.code === Code.InvalidArgument ? 'Choose the country of your billing address.' : err.rawMessage),
      );
      return;
    }
    if (checkout.successUrl) {
      c.res.writeHead(303, { location: checkout.successUrl, 'cache-control': 'no-store' });
      c.res.end();
      return;
    }
    page(c.res, 200, 'Subscribed', '<p>Thank you: the subscription is active. The invoices will follow.</p>');
  });
}
