// Names and JSON paths as SQL text, shared by the embedded records store (sqlite.ts) and its
// multikey side tables (sqlite-multikey.ts).

/** Every collection's table name starts with this; nothing else in the file does. */
export const TABLE_PREFIX = 'rec_';

/**
 * Table names are case-insensitive in SQLite while collection names are not: every character
 * other than a lowercase letter or digit is written as "_" and its hex code, which keeps the
 * mapping one-to-one ("oauthClients" → "rec_oauth_43lients").
 */
export function tableName(collection: string): string {
  let out = TABLE_PREFIX;
  for (const ch of collection) {
    out += /[a-z0-9]/.test(ch) ? ch : `_${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
  }
  return out;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The JSON path of a validated field path, as an SQL string literal (no quotes to escape). */
export function jsonPath(path: string): string {
  return `'$${path
    .split('.')
    .map((segment) => `."${segment.replace(/'/g, "''")}"`)
    .join('')}'`;
}
