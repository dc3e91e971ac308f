// Why a call failed, beyond its gRPC code: a stable reason a service attaches to the error's
// metadata, so the edge can tell apart failures that share a code (FAILED_PRECONDITION for a stale
// etag and for removing the last owner) and answer each with its own HTTP status and problem type
// (edge/errors.ts holds that table). Reasons are kebab-case and never change once shipped.
import { type Code, ConnectError } from '@connectrpc/connect';

export const REASON_KEY = 'mindgate-reason';

export const REASONS = {
  /** An update named a version (etag) that is no longer current. */
  etagMismatch: 'etag-mismatch',
  /** The change would leave an organization without an owner. */
  lastOwner: 'last-owner',
  /** The caller's x-internal-token was missing or wrong: a deployment error, never the end user's. */
  internalCredential: 'internal-credential',
  /** The service is draining for shutdown and takes no new call: another replica may. */
  shuttingDown: 'shutting-down',
  /** An address failed to sign in too often; the metadata "retry-after" says when to try again. */
  signInThrottled: 'sign-in-throttled',
  /** The account has no password (social sign-in only), and the change needs one (a new e-mail address). */
  passwordRequired: 'password-required',
  /** The e-mail address or the password is not correct. */
  invalidCredentials: 'invalid-credentials',
  /** A run's executor no longer holds its lease (expired and taken over, or the run ended). */
  leaseLost: 'lease-lost',
  /** The run has already finished (cancel). */
  runFinished: 'run-finished',
  /** The run is still queued or running (retry). */
  runActive: 'run-active',
  /** The playbook has no published version to run. */
  playbookUnpublished: 'playbook-unpublished',
  /** The alert event is resolved already (acknowledge, resolve, snooze). */
  alertResolved: 'alert-resolved',
  /** An evaluation of a dataset without cases. */
  datasetEmpty: 'dataset-empty',
  /** A dataset already holds as many cases as it may. */
  datasetFull: 'dataset-full',
  /** A comparison of evaluations that have not both finished. */
  evaluationNotFinished: 'evaluation-not-finished',
  /** The organization's plan does not allow more (memories, members): RESOURCE_EXHAUSTED. */
  planLimit: 'plan-limit',
  /** The subscription is not in a state that allows the change (nothing to cancel, a checkout needed). */
  subscriptionState: 'subscription-state',
  /** Payment scheme (brain-pass): the Authorization: Payment credential cannot be decoded. */
  paymentMalformedCredential: 'payment-malformed-credential',
  /** Payment scheme: the challenge was not issued here, was altered, or was already used. */
  paymentInvalidChallenge: 'payment-invalid-challenge',
  /** Payment scheme: the proof did not pay the amount asked (declined, wrong amount or recipient). */
  paymentVerificationFailed: 'payment-verification-failed',
  /** Payment scheme: the challenge expired before the credential arrived. */
  paymentExpired: 'payment-expired',
  /** Payment scheme: the credential names a payment method this platform does not take. */
  paymentMethodUnsupported: 'payment-method-unsupported',
} as const;

export type Reason = (typeof REASONS)[keyof typeof REASONS];

export function failure(message: string, code: Code, reason: Reason): ConnectError {
  return new ConnectError(message, code, { [REASON_KEY]: reason });
}

export function reasonOf(err: ConnectError): string | undefined {
  return err.metadata.get(REASON_KEY) ?? undefined;
}
