#!/usr/bin/env bash
# Fails when the protos break compatibility (buf's FILE rules, buf.yaml) with what CI has already
# accepted. What that is, in order:
#   1. $BUF_BREAKING_AGAINST, when the runner knows the base (any git revision; for a push, the
#      commit main was at before it);
#   2. on main, the last commit this check passed on in this repository: a pass on main records
#      HEAD in the ref refs/ci/proto-checked (every worktree of the repository shares it), so a
#      push of several commits, fast-forwarded, rebased or merged onto main, is compared as a whole
#      with what CI accepted before it, not only its last commit with HEAD~1;
#   3. the first parent of a merge commit: main as it was before the submission was merged;
#   4. on a branch other than main, where it leaves main (origin/main, else main);
#   5. on main with nothing recorded, where it leaves its upstream (origin/main) when it is ahead;
#   6. with nothing known (a fresh clone of main): the previous commit (a push of one commit), and
#      the latest tag (the last release), else the first commit (the contract clients may have been
#      built against from the start).
# The comparison is HEAD's protos with the base's, as a whole, not each commit with its parent: a
# break that a later commit of the same push undoes never reached a state CI accepted, and every
# failure can be fixed by a new commit (main's history is never rewritten). A first commit, or a base
# that a shallow clone cannot reach even after deepening, has nothing to compare with: the check says
# so and passes rather than blocking the build on history it cannot see.
set -euo pipefail
cd "$(dirname "$0")/.."

RECORD=refs/ci/proto-checked
PROTO_PATHS=(proto vendor/proto buf.yaml)

has_commit() { git rev-parse --verify --quiet "$1^{commit}" >/dev/null; }
commit_of() { git rev-parse --verify --quiet "$1^{commit}" 2>/dev/null || true; }

main=$(commit_of origin/main)
[ -n "$main" ] || main=$(commit_of main)
head=$(git rev-parse HEAD)
# On main: the main branch checked out, or a detached checkout of main's commit (as CI runners do).
on_main=false
if [ "$(git rev-parse --abbrev-ref HEAD)" = main ] || [ "$head" = "$main" ]; then on_main=true; fi

against=()
if [ -n "${BUF_BREAKING_AGAINST:-}" ]; then
  against=("$BUF_BREAKING_AGAINST")
elif [ "$on_main" = true ] && has_commit "$RECORD"; then
  against=("$RECORD")
elif has_commit HEAD^2; then
  against=(HEAD^1)
elif [ "$on_main" = false ] && [ -n "$main" ]; then
  against=("$(git merge-base HEAD "$main")")
elif upstream=$(commit_of origin/main) && [ -n "$upstream" ] && [ "$upstream" != "$head" ] \
  && git merge-base --is-ancestor "$upstream" HEAD; then
  against=("$upstream")
else
  # Nothing known: the previous commit (a push of one commit) and the latest release, else the
  # first commit (the contract clients may have been built against from the start).
  if has_commit HEAD~1; then against+=(HEAD~1); fi
  oldest=$(git describe --tags --abbrev=0 HEAD 2>/dev/null || git rev-list --max-parents=0 --first-parent HEAD | tail -n 1)
  if [ "$(git rev-parse "$oldest^{commit}")" != "$head" ] && [ "$(commit_of HEAD~1)" != "$(git rev-parse "$oldest^{commit}")" ]; then
    against+=("$oldest")
  fi
  echo "buf breaking: nothing records what CI has checked (set BUF_BREAKING_AGAINST to the commit before the push)"
fi

for base in "${against[@]}"; do
  if ! has_commit "$base" && [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    git fetch --quiet --deepen=50 origin || true
    break
  fi
done

failed=()
compared=0
for base in "${against[@]}"; do
  if ! has_commit "$base"; then
    echo "buf breaking: no commit '$base' to compare with (shallow history); skipped"
    continue
  fi
  sha=$(git rev-parse "$base^{commit}")
  echo "buf breaking: against $base ($sha)"
  compared=$((compared + 1))
  npx buf breaking --against ".git#ref=$sha" || failed+=("$base")
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "buf breaking: the protos break compatibility with ${failed[*]}" >&2
  exit 1
fi
if [ "$compared" -eq 0 ]; then
  echo "buf breaking: nothing to compare with (first commit or shallow history); skipped"
fi
# Recorded only for main, and only when the protos checked are HEAD's (no local edits).
if [ "$on_main" = true ] && [ -z "$(git status --porcelain -- "${PROTO_PATHS[@]}")" ]; then
  git update-ref -m "buf breaking passed" "$RECORD" HEAD
  echo "buf breaking: recorded $head as checked ($RECORD)"
fi
