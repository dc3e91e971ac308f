// The brain-pass (docs/billing.md): challenges of the Payment HTTP authentication scheme priced
// from the catalogue, and the settlement of a credential that answers one. Unpaid requests leave
// nothing behind (a challenge is an HMAC, not a record); a credential is settled at most once:
// inserting the settlement keyed by the challenge id is the claim, and only its holder charges.
import { randomBytes } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  CompletePassResponseSchema,
  IssueChallengesResponseSchema,
  PaymentChallengeSchema,
  SettlePassResponseSchema,
  type CompletePassRequest,
  type IssueChallengesRequest,
  type PaymentChallenge,
  type SettlePassRequest,
} from '../../../gen/mindgate/billing/v1/brain_pass_pb.js';
import { failure, REASONS, type Reason } from '../../common/rpc/reasons.ts';
import { requireOrganization } from '../../common/rpc/validate.ts';
import { PLAN_ENUMS, type Currency, type PlanKey } from '../catalogue.ts';
import type { BillingContext } from '../context.ts';
import { challengeId, decodeRequest, encodeRequest, INTENT, isBound, REALM, type ChargeRequest } from '../pass/challenge.ts';
import { PaymentDeclinedError } from '../pass/methods.ts';
import { currencyOf, normalizeCountry, type EntityKey } from '../regions.ts';
import { APPLIED_KEPT, type PassTermRecord } from '../pass-term-record.ts';
import type { SettlementRecord } from '../settlement-record.ts';
import { currentSubscription, putSubscription } from '../subscription-store.ts';
import { toStarter, type SubscriptionRecord } from '../subscription-record.ts';

/** How long one request may hold a settlement (charging, then provisioning) before a retry may take over. */
const LEASE_MS = 60_000;

const refuse = (reason: Reason, message: string, code = Code.PermissionDenied) => failure(message, code, reason);
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The pass as sold in a currency: what a challenge asks for. */
function offer(ctx: BillingContext, currency: Currency): ChargeRequest {
  const entity: EntityKey = ctx.catalogue.entities.eu.currency === currency ? 'eu' : 'us';
  return { amount: String(ctx.catalogue.brain_pass.prices[currency]), currency: currency.toLowerCase(), recipient: entity };
}

const passSeconds = (ctx: BillingContext) => ctx.catalogue.brain_pass.hours * 3_600;

/**
 * `opaque`: a random value, which makes every challenge (and so its id) unique, so two agents asking
 * in the same second get different challenges, each payable once; then, for a pass for an existing
 * organization, `:` and its id, bound by the HMAC like every other field.
 */
function opaqueFor(organizationId: string): string {
  const nonce = randomBytes(12).toString('base64url');
  return organizationId ? `${nonce}:${organizationId}` : nonce;
}

/** The organization a challenge was issued for ('' for a new one), from its bound `opaque`. */
function boundOrganization(challenge: PaymentChallenge): string {
  const at = challenge.opaque.indexOf(':');
  return at < 0 ? '' : challenge.opaque.slice(at + 1);
}

export async function issueChallenges(ctx: BillingContext, req: IssueChallengesRequest) {
  const organizationId = req.organizationId ? requireOrganization(req.organizationId) : '';
  const currency = currencyOf(ctx.catalogue, normalizeCountry(req.country));
  const request = encodeRequest(offer(ctx, currency));
  const expires = rfc3339(ctx.now() + ctx.config.passChallengeSeconds * 1_000);
  const description = `Mindgate brain-pass: ${ctx.catalogue.brain_pass.hours} hours of Brain access for ${organizationId ? `organization ${organizationId}` : 'a new organization'}`;
  const challenges = [...ctx.passMethods.keys()].map((method) => {
    const fields = { realm: REALM, method, intent: INTENT, request, expires, digest: '', opaque: opaqueFor(organizationId) };
    return create(PaymentChallengeSchema, { ...fields, id: challengeId(ctx.passSecret, fields), description });
  });
  return create(IssueChallengesResponseSchema, {
    challenges,
    amount: BigInt(ctx.catalogue.brain_pass.prices[currency]),
    currency,
    passSeconds: passSeconds(ctx),
  });
}

/** Everything a credential must be before anything is claimed or charged; returns what it asks. */
function verifyChallenge(ctx: BillingContext, challenge: PaymentChallenge | undefined): ChargeRequest {
  if (!challenge?.id) throw refuse(REASONS.paymentMalformedCredential, 'the credential does not echo a challenge');
  // Before the binding: a method this platform does not take is the more useful answer.
  if (!ctx.passMethods.has(challenge.method)) {
    const taken = [...ctx.passMethods.keys()].join(', ');
    throw refuse(
      REASONS.paymentMethodUnsupported,
      `payment method "${challenge.method.slice(0, 40)}" is not taken here (taken: ${taken})`,
      Code.InvalidArgument,
    );
  }
  if (!isBound(ctx.passSecret, challenge))
    throw refuse(REASONS.paymentInvalidChallenge, 'the challenge was not issued here, or was altered');
  const expires = Date.parse(challenge.expires);
  if (!Number.isFinite(expires) || expires <= ctx.now())
    throw refuse(REASONS.paymentExpired, 'the challenge has expired: request a new one');
  if (challenge.intent !== INTENT) throw refuse(REASONS.paymentInvalidChallenge, 'the challenge is not a charge');
  const asked = decodeRequest(challenge.request);
  const currency = asked?.currency.toUpperCase();
  if (!asked || (currency !== 'EUR' && currency !== 'USD'))
    throw refuse(REASONS.paymentInvalidChallenge, 'the challenge request is not one of ours');
  const current = offer(ctx, currency as Currency);
  if (asked.amount !== current.amount || asked.recipient !== current.recipient) {
    throw refuse(REASONS.paymentVerificationFailed, 'the price or the recipient has changed since the challenge: request a new one');
  }
  return asked;
}

function parsePayload(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    throw refuse(REASONS.paymentMalformedCredential, 'the credential payload is not JSON');
  }
}

/**
 * Claims the settlement of a challenge: inserts it, or takes over one whose holder's lease ran out
 * before it finished (charging again is safe: the method's idempotency key is the challenge id).
 */
async function claim(
  ctx: BillingContext,
  id: string,
  method: string,
  asked: ChargeRequest,
  boundOrganizationId: string,
): Promise<SettlementRecord> {
  const now = ctx.now();
  const fresh: SettlementRecord = {
    _id: id,
    ...(boundOrganizationId ? { boundOrganizationId } : {}),
    state: 'settling',
    method,
    amount: Number(asked.amount),
    currency: asked.currency.toUpperCase(),
    recipient: asked.recipient,
    leaseUntil: now + LEASE_MS,
    version: 1,
    createdAt: now,
  };
  if (await ctx.settlements.put(fresh, { expect: null })) return fresh;
  const held = await ctx.settlements.get(id);
  const resumable = held && (held.state === 'settling' || held.state === 'paid') && held.leaseUntil <= now;
  if (!held || !resumable) throw refuse(REASONS.paymentInvalidChallenge, 'this challenge has already been used: request a new one');
  const taken = { ...held, leaseUntil: now + LEASE_MS, version: held.version + 1 };
  if (!(await ctx.settlements.put(taken, { expect: { version: held.version } }))) {
    throw refuse(REASONS.paymentInvalidChallenge, 'this challenge has already been used: request a new one');
  }
  return taken;
}

async function advanceSettlement(
  ctx: BillingContext,
  from: SettlementRecord,
  change: Partial<SettlementRecord>,
): Promise<SettlementRecord> {
  const next = { ...from, ...change, version: from.version + 1 };
  if (!(await ctx.settlements.put(next, { expect: { version: from.version } }))) {
    throw new ConnectError('the settlement was taken over by another request', Code.Aborted);
  }
  return next;
}

export async function settlePass(ctx: BillingContext, req: SettlePassRequest) {
  const challenge = req.challenge;
  const asked = verifyChallenge(ctx, challenge);
  // A challenge pays for the organization it was issued for, and only when the request names it.
  const bound = boundOrganization(challenge!);
  if (bound !== req.organizationId) {
    throw refuse(
      REASONS.paymentInvalidChallenge,
      bound ? 'the challenge was issued for another organization: request a new one' : 'the challenge was issued for a new organization',
    );
  }
  const payload = parsePayload(req.payloadJson);
  let settlement = await claim(ctx, challenge!.id, challenge!.method, asked, bound);
  if (settlement.state === 'settling') {
    const charge = {
      challengeId: settlement._id,
      amount: settlement.amount,
      currency: settlement.currency,
      recipient: settlement.recipient,
      description: `Mindgate brain-pass (${ctx.catalogue.brain_pass.hours} h)`,
    };
    let reference: string;
    try {
      reference = await ctx.passMethods.get(settlement.method)!.settle(payload, charge);
    } catch (err) {
      if (!(err instanceof PaymentDeclinedError)) {
        // Unknown outcome (the provider did not answer): a retry may take over at once and charge
        // again under the same idempotency key.
        await advanceSettlement(ctx, settlement, { leaseUntil: ctx.now() });
        throw err;
      }
      await advanceSettlement(ctx, settlement, { state: 'failed' });
      throw refuse(REASONS.paymentVerificationFailed, err.message);
    }
    settlement = await advanceSettlement(ctx, settlement, { state: 'paid', reference, settledAt: ctx.now() });
  }
  return create(SettlePassResponseSchema, {
    settlementId: settlement._id,
    method: settlement.method,
    reference: settlement.reference ?? '',
    settleTime: timestampFromMs(settlement.settledAt ?? ctx.now()),
    passSeconds: passSeconds(ctx),
    amount: BigInt(settlement.amount),
    currency: settlement.currency,
  });
}

/** A new organization: the pass's plan "on trial" until the pass ends (a Starter pass: Starter). */
function passOnNew(ctx: BillingContext, record: SubscriptionRecord, plan: PlanKey, expiresAt: number): SubscriptionRecord {
  const base = { ...toStarter(record, ctx.now()), catalogueVersion: ctx.catalogue.version };
  return plan === 'starter' ? base : { ...base, plan, status: 'trialing', trialEndsAt: expiresAt, trialUsed: true };
}

/**
 * An existing organization: never lowered. On Starter it gets the pass's plan until the pass ends;
 * on that plan's trial without a payment method the trial runs at least until then; a paid plan,
 * or a plan already above the pass's, is left as it is. Undefined: nothing to change.
 */
function passOnExisting(ctx: BillingContext, record: SubscriptionRecord, plan: PlanKey, expiresAt: number): SubscriptionRecord | undefined {
  if (plan === 'starter') return undefined;
  if (record.plan === 'starter') return passOnNew(ctx, record, plan, expiresAt);
  const shortTrial =
    record.plan === plan && record.status === 'trialing' && !record.paymentMethodOnFile && (record.trialEndsAt ?? 0) < expiresAt;
  return shortTrial ? { ...record, trialEndsAt: expiresAt, updatedAt: ctx.now() } : undefined;
}

/**
 * Adds a paid settlement's hours to the organization's term: from the later of the payment and the
 * end of its passes so far. Applying the same settlement again gives the end it gave the first time.
 */
async function extendTerm(ctx: BillingContext, organizationId: string, settlement: SettlementRecord): Promise<number> {
  for (;;) {
    const term = await ctx.passTerms.get(organizationId);
    const done = term?.applied.find((a) => a.settlementId === settlement._id);
    if (done) return done.until;
    const from = Math.max(settlement.settledAt ?? ctx.now(), term?.until ?? 0);
    const until = from + passSeconds(ctx) * 1_000;
    const applied = [...(term?.applied ?? []), { settlementId: settlement._id, until }].slice(-APPLIED_KEPT);
    const next: PassTermRecord = { _id: organizationId, until, applied, version: (term?.version ?? 0) + 1 };
    if (await ctx.passTerms.put(next, { expect: term ? { version: term.version } : null })) return until;
  }
}

export async function completePass(ctx: BillingContext, req: CompletePassRequest) {
  const organizationId = requireOrganization(req.organizationId);
  const settlement = /^[A-Za-z0-9_-]{1,100}$/.test(req.settlementId) ? await ctx.settlements.get(req.settlementId) : undefined;
  if (!settlement) throw new ConnectError('no such settlement', Code.NotFound);
  if (settlement.state !== 'paid' && !(settlement.state === 'complete' && settlement.organizationId === organizationId)) {
    throw new ConnectError(`the settlement is ${settlement.state}, not paid`, Code.FailedPrecondition);
  }
  if (settlement.boundOrganizationId && settlement.boundOrganizationId !== organizationId) {
    throw new ConnectError('the pass was paid for another organization', Code.FailedPrecondition);
  }
  const expiresAt = settlement.passExpiresAt ?? (await extendTerm(ctx, organizationId, settlement));
  const plan = ctx.catalogue.brain_pass.plan;
  let inForce: PlanKey;
  for (;;) {
    const current = await currentSubscription(ctx, organizationId);
    const next = settlement.boundOrganizationId
      ? passOnExisting(ctx, current.record, plan, expiresAt)
      : passOnNew(ctx, current.record, plan, expiresAt);
    inForce = (next ?? current.record).plan;
    if (!next || (await putSubscription(ctx, next, current))) break;
  }
  if (settlement.state === 'paid') {
    await advanceSettlement(ctx, settlement, { state: 'complete', organizationId, passExpiresAt: expiresAt });
  }
  return create(CompletePassResponseSchema, { expireTime: timestampFromMs(expiresAt), plan: PLAN_ENUMS[inForce] });
}
