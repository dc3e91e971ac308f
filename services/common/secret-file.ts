// The one loader of secrets kept in files: the internal token, the gateway's state secret and the
// key-encryption key. A generated secret appears complete or not at all: it is written 0600 to a
// file of its own (O_EXCL) and linked into place, and link(2) fails when the name exists, so two
// processes starting on one data directory at once agree on the first one written.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './data-dir.ts';

export interface SecretFileOptions {
  /** Shortest acceptable secret, in characters (surrounding white space is not counted). */
  minLength: number;
  /** Generate a random secret (32 bytes, base64url) when the file is absent; otherwise that is an error. */
  generate: boolean;
}

/** A secret file that cannot be used. The message names the file, never its content. */
export class SecretFileError extends Error {
  readonly file: string;
  constructor(file: string, message: string) {
    super(`${file}: ${message}`);
    this.name = 'SecretFileError';
    this.file = file;
  }
}

function readIfPresent(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SecretFileError(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** Writes `secret` to `file` unless it exists; returns what `file` holds afterwards. */
function createOnce(file: string, secret: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(temporary, 'wx', PRIVATE_FILE_MODE);
  try {
    // 'wx' creates with the mode only as far as the umask allows; the secret never has looser bits.
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
    fs.writeSync(fd, `${secret}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(temporary, file);
    return secret;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim();
    throw err;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

function generate(file: string): string {
  try {
    return createOnce(file, randomBytes(32).toString('base64url'));
  } catch (err) {
    throw new SecretFileError(file, `cannot be created (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** The secret in `file`, generated there first when absent and `generate` is set. */
export function loadSecretFile(file: string, options: SecretFileOptions): string {
  const secret = readIfPresent(file) ?? (options.generate ? generate(file) : undefined);
  if (secret === undefined) throw new SecretFileError(file, 'does not exist');
  if (secret.length < options.minLength) {
    throw new SecretFileError(file, `must hold a secret of at least ${options.minLength} characters`);
  }
  return secret;
}
