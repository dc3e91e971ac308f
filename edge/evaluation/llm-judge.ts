// The LLM judge: the model behind LLM_URL (the LLM runner's provider, same chat-completions wire)
// is asked whether an answer gives what the case expects, and answers a small JSON verdict. A
// verdict it does not give in that shape, or a request the provider refuses (a 4xx other than
// 408/429), is the case's error with a score of 0; a provider that is down fails the call, so the
// evaluation is left to be taken up again rather than scored wrong.
import * as z from 'zod';
import type { Case } from '../../gen/mindgate/agents/v1/evaluation_pb.js';
import { ChatCompletionError, type ChatModel } from '../runs/chat-completions.ts';
import type { CaseScore } from './evaluators.ts';

export const JUDGE = 'llm_judge';
const MAX_ANSWER = 20_000;

const SYSTEM = [
  'You grade the answer of a system against the answer expected for a question.',
  'The answer passes when it states what the expected answer states (other words are fine, extra facts are fine;',
  'missing or contradicting the expected facts is not).',
  'Reply with only a JSON object: {"pass": true or false, "score": a number from 0 to 1, "reason": "one sentence"}.',
].join(' ');

const Verdict = z.object({ pass: z.boolean(), score: z.number().min(0).max(1).optional(), reason: z.string().optional() });

export interface JudgeOutcome {
  score: CaseScore;
  /** Why the case could not be judged ('' when it was). */
  error: string;
}

export interface Judge {
  judge(c: Case, answer: string, signal: AbortSignal): Promise<JudgeOutcome>;
}

/** The verdict in the model's reply (the first JSON object in it), or undefined. */
export function parseVerdict(text: string): z.output<typeof Verdict> | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    const verdict = Verdict.safeParse(JSON.parse(text.slice(start, end + 1)));
    return verdict.success ? verdict.data : undefined;
  } catch {
    return undefined;
  }
}

const refused = (err: unknown) =>
  err instanceof ChatCompletionError &&
  err.status !== undefined &&
  err.status >= 400 &&
  err.status < 500 &&
  ![408, 429].includes(err.status);

export function createJudge(model: ChatModel): Judge {
  const failed = (error: string): JudgeOutcome => ({ score: { name: JUDGE, value: 0, passed: false }, error });
  return {
    async judge(c, answer, signal) {
      const question = c.alert === '' ? c.input : `${c.input}\n\nAlert:\n${c.alert}`;
      const user = `Question:\n${question}\n\nExpected answer:\n${c.expectedAnswer}\n\nAnswer to grade:\n${answer.slice(0, MAX_ANSWER) || '(empty)'}`;
      try {
        const completion = await model.complete(
          [
            { role: 'system', content: SYSTEM },
            { role: 'user', content: user },
          ],
          [],
          signal,
        );
        const verdict = parseVerdict(completion.message.content ?? '');
        if (!verdict) return failed('the judge did not answer the JSON verdict asked for');
        return { score: { name: JUDGE, value: verdict.score ?? (verdict.pass ? 1 : 0), passed: verdict.pass }, error: '' };
      } catch (err) {
        if (refused(err)) return failed(`the judge refused: ${(err as Error).message}`.slice(0, 2_000));
        throw err;
      }
    },
  };
}
