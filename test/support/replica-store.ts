// What the replicas of a deployment share, for tests that run several (the platform in the test's
// process, agents services as their own processes): one MongoDB database, fresh for the test, on
// the MongoDB-wire server; one key-encryption key file; one internal token; and a plans file whose
// monthly runs quota does not stop a test that queues many runs. Each replica is given `env` and
// the MongoDB URL it should reach the database by (the server's, or a proxy in front of it).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_PLANS_FILE } from '../../services/billing/catalogue.ts';
import { writeKeyEncryptionKey } from './key-encryption-file.ts';

export interface ReplicaStore {
  /** MONGODB_DATABASE, KEY_ENCRYPTION_KEY_FILE, INTERNAL_TOKEN and BILLING_PLANS_FILE. */
  env: Record<string, string>;
  /** The internal token every replica shares (env.INTERNAL_TOKEN). */
  token: string;
  /** Removes the key and plans files. */
  remove(): void;
}

/** `name` starts the database's name and the files' directory's. */
export function createReplicaStore(name: string): ReplicaStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mindgate-${name}-`));
  const plans = path.join(dir, 'plans.yaml');
  fs.writeFileSync(plans, fs.readFileSync(DEFAULT_PLANS_FILE, 'utf8').replace('runs_per_month: 100', 'runs_per_month: 100000'));
  const token = crypto.randomBytes(24).toString('base64url');
  return {
    env: {
      MONGODB_DATABASE: `${name.replaceAll('-', '_')}_${crypto.randomBytes(4).toString('hex')}`,
      KEY_ENCRYPTION_KEY_FILE: writeKeyEncryptionKey(dir).file,
      INTERNAL_TOKEN: token,
      BILLING_PLANS_FILE: plans,
    },
    token,
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
