// Organization slugs: unique, URL-friendly names (3-63 characters of a-z, 0-9 and "-", starting
// and ending with a letter or digit), derived from the name when none is given.
import { randomBytes } from 'node:crypto';
import { invalid } from '../../common/rpc/validate.ts';

const SLUG = /^[a-z0-9](?:[a-z0-9-]{1,61})[a-z0-9]$/;

export function requireSlug(value: string, field = 'slug'): string {
  if (!SLUG.test(value)) invalid(field, 'must be 3-63 characters of a-z, 0-9 and "-", starting and ending with a letter or digit');
  return value;
}

/** A slug from a name: lower case ASCII, runs of anything else as one "-", padded to 3 characters. */
export function slugFrom(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return base.length >= 3 ? base : `${base || 'org'}-${randomSuffix()}`;
}

/** Appended to a derived slug that is taken. */
export function randomSuffix(): string {
  return randomBytes(3).toString('hex');
}
