// Deprecating an operation of any API from one declaration on its route: the same object yields
// the response headers (RFC 9745 Deprecation, RFC 8594 Sunset, Link rel="successor-version" and
// rel="deprecation") and `deprecated: true` in the OpenAPI document (see openapi.ts).
import type { ServerResponse } from 'node:http';

/** Least notice between deprecating an operation and removing it (SERVICE-SPEC §9.4). */
export const MIN_SUNSET_NOTICE_DAYS = 90;
const DAY_MS = 86_400_000;

export interface DeprecationOptions {
  /** When the operation is (or was) deprecated: an ISO 8601 date or date-time, or a Date. */
  deprecatedAt: string | Date;
  /** When it is removed; at least MIN_SUNSET_NOTICE_DAYS after `deprecatedAt`. */
  sunsetAt: string | Date;
  /** The replacement: an absolute URL or a path on the same origin. */
  successor?: string;
  /** A page that explains the deprecation (Link rel="deprecation"). */
  documentation?: string;
  /**
   * What the operation does once the sunset has passed: keep serving (`serve`), or answer
   * 410 Gone pointing at the successor (`gone`, the default: the sunset is the removal date).
   */
  afterSunset?: 'serve' | 'gone';
}

export interface Deprecation {
  readonly deprecatedAt: Date;
  readonly sunsetAt: Date;
  readonly successor?: string;
  readonly documentation?: string;
  readonly afterSunset: 'serve' | 'gone';
}

/** A declaration that breaks the rules of §9 (it is a programming error, found at start). */
export class DeprecationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeprecationError';
  }
}

function toDate(value: string | Date, field: string): Date {
  const date = value instanceof Date ? new Date(value.getTime()) : new Date(value);
  if (Number.isNaN(date.getTime())) throw new DeprecationError(`${field} is not a valid date: ${String(value)}`);
  return date;
}

/** Validates a declaration once, so that every response it decorates is correct by construction. */
export function defineDeprecation(options: DeprecationOptions): Deprecation {
  const deprecatedAt = toDate(options.deprecatedAt, 'deprecatedAt');
  const sunsetAt = toDate(options.sunsetAt, 'sunsetAt');
  const noticeDays = (sunsetAt.getTime() - deprecatedAt.getTime()) / DAY_MS;
  if (noticeDays < MIN_SUNSET_NOTICE_DAYS) {
    throw new DeprecationError(
      `sunsetAt (${sunsetAt.toISOString()}) must be at least ${MIN_SUNSET_NOTICE_DAYS} days after ` +
        `deprecatedAt (${deprecatedAt.toISOString()}); it is ${Math.floor(noticeDays)} days`,
    );
  }
  for (const [field, value] of [
    ['successor', options.successor],
    ['documentation', options.documentation],
  ] as const) {
    if (value !== undefined && !/^(https?:\/\/|\/)[^\s<>"]*$/.test(value)) {
      throw new DeprecationError(`${field} must be an http(s) URL or an absolute path, got "${value}"`);
    }
  }
  return Object.freeze({
    deprecatedAt,
    sunsetAt,
    successor: options.successor,
    documentation: options.documentation,
    afterSunset: options.afterSunset ?? 'gone',
  });
}

function resolve(target: string, baseUrl: string | undefined): string {
  return baseUrl && target.startsWith('/') ? `${baseUrl.replace(/\/+$/, '')}${target}` : target;
}

/**
 * The header values of a deprecated operation. `Deprecation` is an RFC 9651 Date (`@` and Unix
 * seconds), `Sunset` an IMF-fixdate; the links are resolved against `baseUrl` when given.
 */
export function deprecationHeaders(deprecation: Deprecation, baseUrl?: string): { deprecation: string; sunset: string; links: string[] } {
  const links: string[] = [];
  if (deprecation.successor) links.push(`<${resolve(deprecation.successor, baseUrl)}>; rel="successor-version"`);
  if (deprecation.documentation) {
    links.push(`<${resolve(deprecation.documentation, baseUrl)}>; rel="deprecation"; type="text/html"`);
  }
  return {
    deprecation: `@${Math.floor(deprecation.deprecatedAt.getTime() / 1000)}`,
    sunset: deprecation.sunsetAt.toUTCString(),
    links,
  };
}

/**
 * Sets the deprecation headers on a response before its handler runs, so that every answer of
 * the operation carries them, errors included. Link values are appended, never replaced.
 */
export function applyDeprecation(res: ServerResponse, deprecation: Deprecation, baseUrl?: string): void {
  const headers = deprecationHeaders(deprecation, baseUrl);
  res.setHeader('deprecation', headers.deprecation);
  res.setHeader('sunset', headers.sunset);
  for (const link of headers.links) res.appendHeader('link', link);
}

/** True once the sunset has passed and the declaration says the operation is then gone. */
export function isRemoved(deprecation: Deprecation, now: number): boolean {
  return deprecation.afterSunset === 'gone' && now >= deprecation.sunsetAt.getTime();
}

/** The sentence OpenAPI documents and problem details use to describe the deprecation. */
export function describeDeprecation(deprecation: Deprecation): string {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  let text = `Deprecated since ${day(deprecation.deprecatedAt)}; removed after ${day(deprecation.sunsetAt)}.`;
  if (deprecation.successor) text += ` Use ${deprecation.successor} instead.`;
  return text;
}
