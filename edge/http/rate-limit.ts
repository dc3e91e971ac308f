// Fixed-window rate limiting shared by every replica: one counter per (policy, client, window
// start) in the records store, bumped with its atomic `increment` and expiring with the window.
// Concurrent requests, on one replica or many, each get a distinct count, so exactly `quota` of
// them pass in a window. Header shapes follow draft-ietf-httpapi-ratelimit-headers.
import type { ServerResponse } from 'node:http';
import type { Logger } from '../../services/common/log.ts';
import type { RecordCollection, RecordDoc, RecordStore } from '../../services/common/storage/records/interface.ts';
import { sendProblem } from './respond.ts';

export interface RateLimitPolicy {
  /** Name announced in RateLimit and RateLimit-Policy (for example `public-read`). */
  name: string;
  /** Requests allowed per window. */
  quota: number;
  windowSeconds: number;
}

export interface RateLimitDecision {
  policy: RateLimitPolicy;
  allowed: boolean;
  /** Requests left in the current window (0 once exhausted). */
  remaining: number;
  /** Whole seconds until the window resets, at least 1. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request of `key` under `policy` and says whether it may proceed. */
  consume(policy: RateLimitPolicy, key: string): Promise<RateLimitDecision>;
}

export interface RateLimiterOptions {
  records: RecordStore;
  /** Clock in epoch milliseconds (injectable, so tests move time instead of sleeping). */
  now: () => number;
  logger?: Logger;
  /** Collection holding the counters. */
  collection?: string;
}

interface CounterDoc extends RecordDoc {
  count: number;
}

/** Prefer answering with a per-replica count over failing every request when the store is down. */
class LocalWindows {
  private readonly counts = new Map<string, { count: number; expiresAt: number }>();

  increment(id: string, expiresAt: number, now: number): number {
    if (this.counts.size > 10_000) {
      for (const [key, entry] of this.counts) if (entry.expiresAt <= now) this.counts.delete(key);
    }
    const entry = this.counts.get(id);
    if (!entry || entry.expiresAt <= now) {
      this.counts.set(id, { count: 1, expiresAt });
      return 1;
    }
    entry.count += 1;
    return entry.count;
  }
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const counters: RecordCollection<CounterDoc> = options.records.collection<CounterDoc>(options.collection ?? 'rate_limit_windows');
  const local = new LocalWindows();
  let lastWarning = 0;

  return {
    async consume(policy, key) {
      const now = options.now();
      const windowMs = policy.windowSeconds * 1000;
      const windowStart = Math.floor(now / windowMs) * windowMs;
      const windowEnd = windowStart + windowMs;
      const id = `${policy.name}|${key}|${windowStart}`;
      let count: number;
      try {
        const doc = await counters.increment(id, 'count', 1, { expiresAt: windowEnd });
        count = doc.count;
      } catch (err) {
        if (now - lastWarning > 60_000) {
          lastWarning = now;
          options.logger?.warn({ err }, 'rate-limit store unavailable: counting on this replica only');
        }
        count = local.increment(id, windowEnd, now);
      }
      return {
        policy,
        allowed: count <= policy.quota,
        remaining: Math.max(0, policy.quota - count),
        resetSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)),
      };
    },
  };
}

/** An RFC 9651 sf-string. */
function sfString(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** The RateLimit, RateLimit-Policy and legacy RateLimit-Limit/-Remaining/-Reset fields. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const { policy } = decision;
  const name = sfString(policy.name);
  return {
    'ratelimit-policy': `${name};q=${policy.quota};w=${policy.windowSeconds}`,
    ratelimit: `${name};r=${decision.remaining};t=${decision.resetSeconds}`,
    'ratelimit-limit': String(policy.quota),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': String(decision.resetSeconds),
  };
}

export const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

/**
 * Sets the rate-limit headers on `res` and, when the request is over the limit, answers 429 with
 * an RFC 9457 problem and Retry-After equal to the seconds until the window resets. Returns
 * whether the request may proceed.
 */
export function enforceRateLimit(res: ServerResponse, decision: RateLimitDecision, instance: string): boolean {
  for (const [name, value] of Object.entries(rateLimitHeaders(decision))) res.setHeader(name, value);
  if (decision.allowed) return true;
  sendProblem(
    res,
    {
      type: QUOTA_EXCEEDED_TYPE,
      title: 'Too Many Requests',
      status: 429,
      detail:
        `Rate limit "${decision.policy.name}" allows ${decision.policy.quota} requests per ` +
        `${decision.policy.windowSeconds} seconds; retry in ${decision.resetSeconds} seconds.`,
      instance,
      'violated-policies': [decision.policy.name],
    },
    { 'retry-after': String(decision.resetSeconds) },
  );
  return false;
}
