// The brain-pass payment-method port: how the proof in a Payment credential's payload becomes a
// settled payment. Two implementations: Stripe (a card token or payment method charged through the
// official client) and the test method of the embedded default (made-up cards, no money moves).
// The method settles exactly the challenge's amount and currency; its idempotency key is the
// challenge id, so a provider that saw the charge once answers the same charge again.

/** The proof did not pay: declined, of the wrong amount, malformed. The message is safe to show. */
export class PaymentDeclinedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaymentDeclinedError';
  }
}

export interface Charge {
  challengeId: string;
  /** Minor units. */
  amount: number;
  /** Upper-case ISO 4217. */
  currency: string;
  /** Who is paid: the regional entity's key. */
  recipient: string;
  description: string;
}

export interface PassMethod {
  readonly name: string;
  /** Settles the charge with the payload's proof; returns the payment's reference, or throws PaymentDeclinedError. */
  settle(payload: unknown, charge: Charge): Promise<string>;
}
