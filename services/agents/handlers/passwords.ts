// Password hashes of accounts: scrypt (N=16384, r=8, p=1, 16-byte salt, 32-byte key), stored as
// `scrypt$N$r$p$salt$hash` so that a later change of parameters still checks older hashes.
import { randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const SCRYPT = { N: 16_384, r: 8, p: 1 };
const MAXMEM = 64 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1_024;

function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32, { ...SCRYPT, maxmem: MAXMEM });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function checkPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt') return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: MAXMEM,
  });
  return timingSafeEqual(expected, actual);
}

// Compared against when the address is unknown (or has no password), so both paths cost one scrypt.
let dummy: Promise<string> | undefined;

/** Checks `password` against `stored`, or spends the same time and answers false when there is none. */
export async function checkPasswordOrDummy(password: string, stored: string | undefined): Promise<boolean> {
  if (stored) return checkPassword(password, stored);
  await checkPassword(password, await (dummy ??= hashPassword(randomUUID())));
  return false;
}
