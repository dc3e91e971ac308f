// Examples of memory seeding's bodies for the OpenAPI document, by schema title (index.ts
// spreads them into EXAMPLES).
import { AT, ORG } from './common.ts';

const progress = {
  total: 42,
  pending: 12,
  awaiting_review: 0,
  approved: 0,
  stored: 27,
  duplicate: 1,
  contradiction: 1,
  unchanged: 0,
  rejected: 1,
  failed: 0,
  skipped: 0,
};

const seedingRun = {
  id: 'sdr_k3q7v2mz5wx4abcdnp6r',
  organization_id: ORG,
  status: 'writing',
  source: { kind: 'upload', name: 'docs.zip', media_type: 'application/zip', bytes: 48_213 },
  namespace: 'knowledge',
  key_prefix: 'docs/',
  tags: ['imported'],
  review: false,
  progress,
  error: '',
  stop_reason: '',
  created_by: 'usr_8fJ2kLm4Pq9RsT1v',
  attempt: 1,
  seq: 30,
  created_at: AT,
  updated_at: AT,
  finished_at: null,
};

const seedingItem = {
  index: 3,
  outcome: 'stored',
  namespace: 'knowledge',
  key: 'docs/runbooks/deploy/rollback',
  title: 'Rollback',
  content: 'Roll back with the previous release tag; the payments team approves a rollback.',
  tags: ['imported'],
  entities: ['payments team'],
  origin: 'runbooks/deploy.md#rollback',
  reason: '',
  duplicates: [],
  contradictions: [],
  version: 1,
  seq: 4,
};

export const SEEDING_EXAMPLES: Record<string, unknown> = {
  SeedingRun: seedingRun,
  SeedingItem: seedingItem,
  SeedingProgress: progress,
  SeedingReview: { run: { ...seedingRun, review: true, status: 'awaiting_review' }, decided: 3 },
  StartSeedingFromUrl: { url: 'https://raw.githubusercontent.com/acme/docs/main/runbooks/deploy.md', key_prefix: 'docs/', review: true },
  CancelSeedingRun: { reason: 'wrong folder' },
  ReviewSeedingItems: { decision: 'approve', indexes: [0, 1, 4] },
};
