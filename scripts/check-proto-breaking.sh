#!/usr/bin/env bash
# Fails when the protos break compatibility with the last commit on main that this code builds on
# (buf's FILE rules, buf.yaml). Which commit that is, in order:
#   1. $BUF_BREAKING_AGAINST, when the runner knows the base (any git revision);
#   2. the first parent of a merge commit: main as it was before the submission was merged;
#   3. on a branch other than main, where it leaves main (origin/main, else main);
#   4. otherwise the previous commit (a submission applied to main as one commit).
# A first commit, or a base that a shallow clone cannot reach even after deepening, has nothing to
# compare with: the check says so and passes rather than blocking the build on history it cannot see.
set -euo pipefail
cd "$(dirname "$0")/.."

has_commit() { git rev-parse --verify --quiet "$1^{commit}" >/dev/null; }

if [ -n "${BUF_BREAKING_AGAINST:-}" ]; then
  against=$BUF_BREAKING_AGAINST
elif has_commit HEAD^2; then
  against=HEAD^1
elif main=$(git rev-parse --verify --quiet origin/main || git rev-parse --verify --quiet main) \
  && [ "$(git rev-parse --abbrev-ref HEAD)" != main ] && [ "$main" != "$(git rev-parse HEAD)" ]; then
  against=$(git merge-base HEAD "$main")
else
  against=HEAD~1
fi

if ! has_commit "$against" && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  git fetch --quiet --deepen=50 origin || true
fi
if ! has_commit "$against"; then
  echo "buf breaking: no commit '$against' to compare with (first commit or shallow history); skipped"
  exit 0
fi

sha=$(git rev-parse "$against^{commit}")
echo "buf breaking: against $against ($sha)"
npx buf breaking --against ".git#ref=$sha"
