// The test payment method of the embedded default (BRAIN_PASS_METHODS=test): its payload names a
// made-up card, {"card": "4242424242424242"} pays and {"card": "4000000000000002"} is declined,
// as Stripe's test cards do. No money moves, so a deployment that sells passes for real turns it
// off (BRAIN_PASS_METHODS=stripe). Each settlement gets a reference derived from the challenge.
import { createHash } from 'node:crypto';
import { PaymentDeclinedError, type PassMethod } from './methods.ts';

export const TEST_CARD_PAYS = '4242424242424242';
export const TEST_CARD_DECLINED = '4000000000000002';

export function createTestPassMethod(): PassMethod {
  return {
    name: 'test',
    async settle(payload, charge) {
      const card = typeof payload === 'object' && payload !== null ? (payload as { card?: unknown }).card : undefined;
      if (typeof card !== 'string' || !/^\d{12,19}$/.test(card.replace(/[ -]/g, ''))) {
        throw new PaymentDeclinedError('the test method needs {"card": "<test card number>"} in the payload');
      }
      if (card.replace(/[ -]/g, '') !== TEST_CARD_PAYS) throw new PaymentDeclinedError('the card was declined');
      return `test_${createHash('sha256').update(charge.challengeId).digest('hex').slice(0, 24)}`;
    },
  };
}
