// scripts/check-proto-breaking.sh, the CI step that runs `buf breaking`, on throwaway git
// repositories holding a copy of the protos: it passes on a first commit (nothing to compare
// with) and on compatible changes, and fails on a breaking change, also when the change is not
// the branch's last commit (it compares with where the branch left main, not with HEAD~1).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const PROTO = 'proto/mindgate/billing/v1/billing.proto';
const dirs: string[] = [];

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.test',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.test',
};

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, env: gitEnv, encoding: 'utf8' });
}

/** A repository on branch main with one commit: the protos, buf.yaml and the script. */
function repository(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-breaking-'));
  dirs.push(dir);
  for (const entry of ['proto', 'vendor', 'buf.yaml', 'scripts/check-proto-breaking.sh']) {
    fs.cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true });
  }
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules\n');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'first');
  return dir;
}

function change(dir: string, from: string, to: string, message: string): void {
  const file = path.join(dir, PROTO);
  const text = fs.readFileSync(file, 'utf8');
  expect(text).toContain(from);
  fs.writeFileSync(file, text.replace(from, to));
  git(dir, 'commit', '-q', '-am', message);
}

const renumber = (dir: string) => change(dir, 'uint64 max_memories = 3;', 'uint64 max_memories = 40;', 'renumber a field');
const comment = (dir: string) => change(dir, 'message Entitlements {', 'message Entitlements {\n  // More words.', 'comment');

function check(dir: string) {
  const run = spawnSync('bash', ['scripts/check-proto-breaking.sh'], { cwd: dir, env: gitEnv, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('buf breaking in CI', () => {
  it('passes on a first commit, saying there is nothing to compare with', () => {
    const r = check(repository());
    expect(r.status).toBe(0);
    expect(r.output).toContain('skipped');
  });

  it('passes on a compatible change', () => {
    const dir = repository();
    comment(dir);
    expect(check(dir).status).toBe(0);
  });

  it('fails on a breaking change to main', () => {
    const dir = repository();
    renumber(dir);
    const r = check(dir);
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/Previously present field "3" with name "max_memories"/);
  });

  it('fails on a branch whose breaking change is not its last commit', () => {
    const dir = repository();
    git(dir, 'checkout', '-q', '-b', 'submission');
    renumber(dir);
    comment(dir);
    const r = check(dir);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('max_memories');
  });

  it('fails on a merge commit that brings a breaking change into main', () => {
    const dir = repository();
    git(dir, 'checkout', '-q', '-b', 'submission');
    renumber(dir);
    comment(dir);
    git(dir, 'checkout', '-q', 'main');
    git(dir, 'merge', '-q', '--no-ff', '-m', 'merge', 'submission');
    const r = check(dir);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('against HEAD^1');
  });
});
