// Data has one owner: the agents service owns users, their sign-in records, organizations,
// memberships, teams, invitations, API keys and the audit log. The edge reaches them only through
// its Connect clients, so no edge source opens one of those collections of the records store.
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const AGENTS_COLLECTIONS = [
  'auth_users',
  'auth_user_emails',
  'auth_social_identities',
  'auth_email_tokens',
  'auth_sign_in_attempts',
  'organizations',
  'memberships',
  'team_members',
  'teams',
  'invitations',
  'api_keys',
  'audit_events',
];

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

it('no edge module opens a collection of the agents service', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const offenders: string[] = [];
  for (const file of sources(path.join(root, 'edge'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const name of AGENTS_COLLECTIONS) {
      if (new RegExp(`collection(<[^>]*>)?\\(\\s*['"\`]${name}['"\`]`).test(text)) offenders.push(`${path.relative(root, file)}: ${name}`);
    }
  }
  expect(offenders).toEqual([]);
});

it('the agents service opens every one of them (the list above is not stale)', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  const text = fs.readFileSync(path.join(root, 'services/agents/index.ts'), 'utf8');
  for (const name of AGENTS_COLLECTIONS) expect(text, name).toMatch(new RegExp(`collection(<[^>]*>)?\\(\\s*'${name}'`));
});
