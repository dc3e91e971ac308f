// The one loader of secret files (internal token, gateway state secret, key-encryption key).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSecretFile, SecretFileError } from '../../services/common/secret-file.ts';

const root = path.resolve(import.meta.dirname, '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-secret-'));
  dirs.push(dir);
  return dir;
}

describe('loadSecretFile', () => {
  it('generates a 0600 file under umask 022, leaves no temporary file, and reads it back', () => {
    const file = path.join(tempDir(), 'sub', 'secret');
    const previous = process.umask(0o022);
    try {
      const secret = loadSecretFile(file, { minLength: 32, generate: true });
      expect(secret).toMatch(/^[\w-]{43}$/);
      expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
      expect((fs.statSync(path.dirname(file)).mode & 0o777).toString(8)).toBe('700');
      expect(fs.readdirSync(path.dirname(file))).toEqual(['secret']);
      expect(loadSecretFile(file, { minLength: 32, generate: true })).toBe(secret);
    } finally {
      process.umask(previous);
    }
  });

  it('gives every process starting at once the same secret', async () => {
    const file = path.join(tempDir(), 'secret');
    const script = `import { loadSecretFile } from ${JSON.stringify(path.join(root, 'services/common/secret-file.ts'))};
      process.stdout.write(loadSecretFile(${JSON.stringify(file)}, { minLength: 32, generate: true }));`;
    const outputs = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
            let out = '';
            child.stdout.on('data', (c) => (out += c));
            child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
          }),
      ),
    );
    expect(new Set(outputs).size).toBe(1);
    expect(outputs[0]).toBe(fs.readFileSync(file, 'utf8').trim());
  });

  it('refuses a missing file it may not generate, and a short one, naming the file and not the content', () => {
    const dir = tempDir();
    const missing = path.join(dir, 'missing');
    expect(() => loadSecretFile(missing, { minLength: 32, generate: false })).toThrow(SecretFileError);
    expect(fs.existsSync(missing)).toBe(false);
    const short = path.join(dir, 'short');
    fs.writeFileSync(short, 'too-short-secret\n');
    expect(() => loadSecretFile(short, { minLength: 32, generate: true })).toThrow(
      `${short}: must hold a secret of at least 32 characters`,
    );
    try {
      loadSecretFile(short, { minLength: 32, generate: true });
    } catch (err) {
      expect(String(err)).not.toContain('too-short-secret');
    }
  });
});
