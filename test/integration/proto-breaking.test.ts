// scripts/check-proto-breaking.sh, the CI step that runs `buf breaking`, on throwaway git
// repositories holding a copy of the protos: it passes on a first commit (nothing to compare
// with) and on compatible changes, and fails on a breaking change, also when the change is not
// the last commit: a branch is compared with where it left main, and main with the last commit
// the check passed on there (recorded in refs/ci/proto-checked), so a push of several commits is
// checked as a whole, not only its last commit against HEAD~1.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const PROTO = 'proto/mindgate/billing/v1/billing.proto';
const dirs: string[] = [];
const RECORD = 'refs/ci/proto-checked';

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

const restore = (dir: string) => change(dir, 'uint64 max_memories = 40;', 'uint64 max_memories = 3;', 'restore the field number');

function check(dir: string, env: Record<string, string> = {}) {
  const run = spawnSync('bash', ['scripts/check-proto-breaking.sh'], { cwd: dir, env: { ...gitEnv, ...env }, encoding: 'utf8' });
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

describe('buf breaking on main, commit by commit or several at once', () => {
  const recorded = (dir: string) =>
    spawnSync('git', ['rev-parse', '--verify', '--quiet', RECORD], { cwd: dir, encoding: 'utf8' }).stdout.trim();
  const head = (dir: string) => git(dir, 'rev-parse', 'HEAD').trim();

  it('records the commit it passed on, on main only', () => {
    const dir = repository();
    expect(check(dir).status).toBe(0);
    expect(recorded(dir)).toBe(head(dir));
    git(dir, 'checkout', '-q', '-b', 'submission');
    comment(dir);
    expect(check(dir).status).toBe(0);
    git(dir, 'checkout', '-q', 'main');
    expect(recorded(dir)).toBe(head(dir));
  });

  it('fails on a push to main whose breaking change is not its last commit', () => {
    const dir = repository();
    expect(check(dir).status).toBe(0);
    const accepted = head(dir);
    renumber(dir);
    comment(dir);
    const r = check(dir);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain(`against ${RECORD} (${accepted})`);
    expect(r.output).toMatch(/Previously present field "3" with name "max_memories"/);
    // The record moves only on a pass: a compatible commit on top still fails.
    comment(dir);
    expect(check(dir).status).not.toBe(0);
    expect(recorded(dir)).toBe(accepted);
  });

  it('fails on a branch fast-forwarded into main with the break in its first commit', () => {
    const dir = repository();
    expect(check(dir).status).toBe(0);
    git(dir, 'checkout', '-q', '-b', 'submission');
    renumber(dir);
    comment(dir);
    comment(dir);
    git(dir, 'checkout', '-q', 'main');
    git(dir, 'merge', '-q', '--ff-only', 'submission');
    const r = check(dir);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('max_memories');
  });

  it('compares the next push with the last commit it passed on, not with older ones', () => {
    const dir = repository();
    expect(check(dir).status).toBe(0);
    comment(dir);
    comment(dir);
    expect(check(dir).status).toBe(0);
    expect(recorded(dir)).toBe(head(dir));
    const accepted = head(dir);
    renumber(dir);
    const r = check(dir);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain(`(${accepted})`);
  });

  it('passes a push whose break is undone by a later commit of the same push', () => {
    // Compared as a whole: no state with the break was ever accepted, and a failure must always be
    // fixable by a new commit, since main's history is not rewritten.
    const dir = repository();
    expect(check(dir).status).toBe(0);
    renumber(dir);
    restore(dir);
    expect(check(dir).status).toBe(0);
  });

  it('uses the base the runner names in BUF_BREAKING_AGAINST', () => {
    const dir = repository();
    const before = head(dir);
    renumber(dir);
    comment(dir);
    const r = check(dir, { BUF_BREAKING_AGAINST: before });
    expect(r.status).not.toBe(0);
    expect(r.output).toContain(`against ${before}`);
  });

  it('on a fresh clone with nothing recorded, compares with the first commit as well as the previous one', () => {
    const dir = repository();
    renumber(dir);
    comment(dir);
    expect(check(dir).status).not.toBe(0);
    // A clone carries neither the record nor an upstream that is behind.
    const clone = fs.mkdtempSync(path.join(os.tmpdir(), 'mindgate-breaking-clone-'));
    dirs.push(clone);
    git(clone, 'clone', '-q', dir, '.');
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(clone, 'node_modules'));
    const r = check(clone);
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('nothing records what CI has checked');
    expect(r.output).toContain('max_memories');
  });

  it('on a fresh clone, compares with the latest tag when there is one', () => {
    const dir = repository();
    git(dir, 'tag', 'v1.0.0');
    comment(dir);
    renumber(dir);
    restore(dir);
    comment(dir);
    const r = check(dir);
    expect(r.output).toContain('against v1.0.0');
    expect(r.status).toBe(0);
  });
});
