// The small expression forms of a playbook document, read by the validator (the agents service)
// and evaluated by the built-in runner (the edge): paths into what a run knows so far (its inputs
// and the results of its earlier steps), `{{ path }}` templates in strings, and conditions that
// compare what a path names. Paths are JSONPath's dot-and-index subset (`steps.find.result.content[0].text`,
// a leading `$.` allowed); nothing is ever evaluated as code.

/** A path split into its parts: names and array indexes. */
export type PathPart = string | number;

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** The parts of a path, or a message saying why it is not one. */
export function parsePath(text: string): PathPart[] | string {
  const body = text.trim().replace(/^\$\.?/, '');
  if (body === '') return 'is empty';
  const parts: PathPart[] = [];
  for (const segment of body.split('.')) {
    const match = /^([^[\]]+)((?:\[\d{1,6}\])*)$/.exec(segment);
    if (!match || !NAME.test(match[1])) return `"${segment}" is not a name with optional [index]es`;
    parts.push(match[1]);
    for (const index of match[2].matchAll(/\[(\d+)\]/g)) parts.push(Number(index[1]));
  }
  return parts;
}

/** What a path names in `scope`, or undefined when any part is missing. */
export function resolvePath(scope: unknown, parts: PathPart[]): unknown {
  let value: unknown = scope;
  for (const part of parts) {
    if (value === null || typeof value !== 'object') return undefined;
    if (typeof part === 'number') {
      if (!Array.isArray(value)) return undefined;
      value = value[part];
    } else {
      if (Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
      value = (value as Record<string, unknown>)[part];
    }
  }
  return value;
}

/** The paths of the `{{ … }}` templates in a string. */
export function templatePaths(text: string): string[] {
  return [...text.matchAll(TEMPLATE)].map((m) => m[1]);
}

const asText = (value: unknown) => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value));

/**
 * Fills the templates of a value (strings anywhere in it). A string that is one template alone
 * becomes the value the path names, whatever its type; elsewhere values are written as text
 * (JSON for objects), and a path that names nothing as ''.
 */
export function fillTemplates(value: unknown, scope: unknown): unknown {
  if (typeof value === 'string') {
    const alone = /^\{\{\s*([^{}]*?)\s*\}\}$/.exec(value);
    const named = (path: string) => {
      const parts = parsePath(path);
      return typeof parts === 'string' ? undefined : resolvePath(scope, parts);
    };
    if (alone) return named(alone[1]) ?? '';
    return value.replace(TEMPLATE, (_, path: string) => asText(named(path)));
  }
  if (Array.isArray(value)) return value.map((v) => fillTemplates(v, scope));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillTemplates(v, scope)]));
  }
  return value;
}

/**
 * A condition: `{path, equals}`, `{path, not_equals}`, `{path, contains}` (a substring of a string,
 * or an element of an array), `{path, exists}`, or `{all: [...]}`, `{any: [...]}`, `{not: {...}}`.
 */
export type Condition =
  | { path: string; equals?: unknown; not_equals?: unknown; contains?: unknown; exists?: boolean }
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition };

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

function contains(value: unknown, wanted: unknown): boolean {
  if (typeof value === 'string') return typeof wanted === 'string' && value.includes(wanted);
  if (Array.isArray(value)) return value.some((v) => sameValue(v, wanted));
  return false;
}

/** Whether a condition holds in `scope` (a path that names nothing is undefined: it equals nothing). */
export function evaluateCondition(condition: Condition, scope: unknown): boolean {
  if ('all' in condition) return condition.all.every((c) => evaluateCondition(c, scope));
  if ('any' in condition) return condition.any.some((c) => evaluateCondition(c, scope));
  if ('not' in condition) return !evaluateCondition(condition.not, scope);
  const parts = parsePath(condition.path);
  const value = typeof parts === 'string' ? undefined : resolvePath(scope, parts);
  if (condition.exists !== undefined && (value !== undefined) !== condition.exists) return false;
  if ('equals' in condition && !sameValue(value, condition.equals)) return false;
  if ('not_equals' in condition && sameValue(value, condition.not_equals)) return false;
  if ('contains' in condition && !contains(value, condition.contains)) return false;
  return true;
}
