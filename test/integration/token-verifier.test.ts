// The access-token verifier every resource server of the platform uses, on tokens signed with a
// real key: what it remembers of a token (its signature, issuer, type and audience checks) never
// outlives the token's expiry or hides a revocation, and a token is never accepted for an
// audience it was not checked for.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRevocationStore, REVOCATION_CACHE_MS, type RevocationStore } from '../../edge/oauth/revocations.ts';
import { createTokenVerifier, type TokenVerifier } from '../../edge/oauth/verify.ts';
import { createSqliteRecordStore } from '../../services/common/storage/records/sqlite.ts';
import type { RecordStore } from '../../services/common/storage/records/interface.ts';

const ISSUER = 'https://auth.example.test';
const BRAIN = 'https://gateway.example.test/brain/mcp';
const API = 'https://api.example.test';
// One fixed clock for the verifier, the revocation store and the records store's expiries alike,
// so nothing here depends on today's date.
let clock = Date.UTC(2026, 10, 23, 12, 0, 0);
const now = () => clock;

let dir: string;
let records: RecordStore;
let revocations: RevocationStore;
let verifier: TokenVerifier;
let sign: (claims: Record<string, unknown>, lifetimeSeconds?: number) => Promise<string>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-verifier-'));
  records = await createSqliteRecordStore({ path: path.join(dir, 'records.sqlite'), now });
  revocations = createRevocationStore(records, now);
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  verifier = createTokenVerifier({ issuer: ISSUER, jwks: { keys: [jwk] }, revocations, now });
  let n = 0;
  sign = (claims, lifetimeSeconds = 300) => {
    const iat = Math.floor(clock / 1000);
    return new SignJWT({ org: 'org-a', client_id: 'client-a', scope: 'openid', gid: `grant-${++n}`, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
      .setIssuer(ISSUER)
      .setSubject('user-1')
      .setJti(`jti-${n}`)
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetimeSeconds)
      .setAudience(BRAIN)
      .sign(privateKey);
  };
});

afterAll(async () => {
  await records?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('token verifier', () => {
  it('accepts a valid token again and again, with the same claims', async () => {
    const token = await sign({});
    const first = await verifier.verify(token, BRAIN);
    const again = await verifier.verify(token, BRAIN);
    expect(again).toEqual(first);
    expect(first).toMatchObject({ organizationId: 'org-a', clientId: 'client-a', subject: 'user-1', audience: BRAIN });
  });

  it('refuses a token it accepted once it has expired', async () => {
    const token = await sign({}, 60);
    await verifier.verify(token, BRAIN);
    clock += 66_000;
    await expect(verifier.verify(token, BRAIN)).rejects.toThrow('the access token has expired');
  });

  it('refuses a token it accepted once it is revoked, within the revocation cache time', async () => {
    const token = await sign({});
    const claims = await verifier.verify(token, BRAIN);
    await revocations.revokeGrant(claims.grantId!, claims.expiresAt * 1000);
    await expect(verifier.verify(token, BRAIN)).rejects.toThrow('the access token has been revoked');
    expect(REVOCATION_CACHE_MS).toBeLessThanOrEqual(2_000);
  });

  it('never accepts a token for another audience because it was accepted for its own', async () => {
    const token = await sign({});
    await verifier.verify(token, BRAIN);
    await expect(verifier.verify(token, API)).rejects.toThrow('the access token was not issued for this resource');
    await expect(verifier.verify(token, BRAIN)).resolves.toMatchObject({ audience: BRAIN });
  });

  it('refuses a token whose signature does not match, even when an identical payload was accepted', async () => {
    const token = await sign({});
    await verifier.verify(token, BRAIN);
    const [header, payload, signature] = token.split('.');
    const tampered = `${header}.${payload}.${signature!.slice(0, -4)}AAAA`;
    await expect(verifier.verify(tampered, BRAIN)).rejects.toThrow('the access token is invalid');
  });
});
