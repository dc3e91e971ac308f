// Readiness checks: whether something this process needs (a store, an internal service) answers
// within a deadline. Liveness never uses them: a store that goes away must take a process out of
// rotation, not restart it (docs/operations.md, Probes).
//
// A check's result is reused for CACHE_MS and concurrent callers share one run, so that kubelet
// probes, load balancers and health Watch streams polling together cost one round trip per
// store and period. A change of state is logged once, with the reason, where operators look.
import { Code, ConnectError } from '@connectrpc/connect';
import type { Logger } from './log.ts';

/** How long a result is reused. Short against the probes' periods (5 s and more). */
export const READINESS_CACHE_MS = 1_000;

export interface CheckResult {
  name: string;
  ok: boolean;
  /** Time the check took, in milliseconds (the deadline when it timed out). */
  ms: number;
  /** Why it is not ready, safe to show to anyone: a timeout or an error's kind, never its text. */
  reason?: string;
}

/** Resolves when the dependency answers; rejects (or never settles) when it does not. */
export type CheckFn = (signal: AbortSignal) => Promise<unknown>;

export interface CheckOptions {
  timeoutMs: number;
  /** Where changes of state are logged (warn when it fails, info when it is back). */
  logger?: Logger;
  cacheMs?: number;
}

export interface Check {
  readonly name: string;
  /** The current result: run now, or reused from the last CACHE_MS. */
  run(): Promise<CheckResult>;
}

/**
 * A reason that names no address, host or credential (the messages of drivers do): a gRPC code's
 * name, a system error's code (ECONNREFUSED) found along the causes, or the error's class name.
 */
export function publicReason(error: unknown): string {
  if (error instanceof ConnectError) return Code[error.code] ?? 'Unknown';
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
  }
  const name = error instanceof Error ? error.name : '';
  return /^[A-Za-z]{1,60}$/.test(name) && name !== 'Error' ? name : 'error';
}

async function runOnce(name: string, fn: CheckFn, timeoutMs: number): Promise<{ result: CheckResult; error?: unknown }> {
  const started = performance.now();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const ms = () => Math.round((performance.now() - started) * 100) / 100;
  try {
    const outcome = await Promise.race([fn(controller.signal).then(() => 'ok' as const), deadline]);
    if (outcome === 'ok') return { result: { name, ok: true, ms: ms() } };
    controller.abort();
    return { result: { name, ok: false, ms: ms(), reason: `no answer within ${timeoutMs} ms` } };
  } catch (error) {
    return { result: { name, ok: false, ms: ms(), reason: publicReason(error) }, error };
  } finally {
    clearTimeout(timer);
  }
}

/** A named check with a deadline, a short cache and logged changes of state. */
export function createCheck(name: string, fn: CheckFn, options: CheckOptions): Check {
  const cacheMs = options.cacheMs ?? READINESS_CACHE_MS;
  let cached: { at: number; result: CheckResult } | undefined;
  let inflight: Promise<CheckResult> | undefined;
  let lastOk: boolean | undefined;
  const run = () => {
    if (cached && performance.now() - cached.at < cacheMs) return Promise.resolve(cached.result);
    inflight ??= runOnce(name, fn, options.timeoutMs)
      .then(({ result, error }) => {
        cached = { at: performance.now(), result };
        if (result.ok !== lastOk && (lastOk !== undefined || !result.ok)) {
          if (result.ok) options.logger?.info({ check: name }, `readiness: ${name} answers again`);
          else options.logger?.warn({ check: name, reason: result.reason, err: error }, `readiness: ${name} is not ready`);
        }
        lastOk = result.ok;
        return result;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };
  return { name, run };
}

/** Runs every check together; ready when all are. */
export async function runChecks(checks: Check[]): Promise<{ ready: boolean; checks: CheckResult[] }> {
  const results = await Promise.all(checks.map((check) => check.run()));
  return { ready: results.every((r) => r.ok), checks: results };
}
