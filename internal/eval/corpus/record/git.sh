#!/usr/bin/env bash
# Records the `git` family: conflicts, rejected pushes, failing hooks and patches, and the
# everyday successes, in the git-shop project's repository.
#
# Needs: git (2.39 here), python3 (the history script edits files with it).
# Run:   bash internal/eval/corpus/record/git.sh
# Each case first rebuilds the repository with testdata/projects/git-shop/make_history.sh
# (fixed authors and dates, so commit hashes are the same on every run); the push case's
# bare remote is $CTXC_CORPUS_WORKDIR/git-shop-origin.git. Global and system git
# configuration are ignored, so git's default advice hints are printed.
source "$(dirname "$0")/lib.sh"

mkdir -p "$CTXC_CORPUS_WORKDIR/git-home"
: >"$CTXC_CORPUS_WORKDIR/git-home/gitconfig"
export GIT_CONFIG_GLOBAL="$CTXC_CORPUS_WORKDIR/git-home/gitconfig" GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME="Ada Lovelace" GIT_AUTHOR_EMAIL="ada@shop.example"
export GIT_COMMITTER_NAME="Ada Lovelace" GIT_COMMITTER_EMAIL="ada@shop.example"
export GIT_AUTHOR_DATE="2024-05-30T09:00:00Z" GIT_COMMITTER_DATE="2024-05-30T09:00:00Z"
unset GIT_DIR GIT_WORK_TREE GIT_PAGER PAGER GIT_EDITOR
export GIT_EDITOR=true
export ORIGIN="$CTXC_CORPUS_WORKDIR/git-shop-origin.git"

P=git-shop
V="git --version"
# prepare SCENARIO: a fresh copy of the project with its history in that state.
prepare() {
  fresh_project $P
  (cd "$CTXC_CORPUS_WORKDIR/$P" && bash make_history.sh "$1")
}
export CTXC_CORPUS_KEEP=1

# Failures
prepare base
record git merge-conflict $P git "$V" -- git merge feature/bulk-pricing
CTXC_CORPUS_KEEP=1 record git status-unmerged $P git "$V" -- git status
prepare rebase
record git rebase-conflict $P git "$V" -- git rebase main
prepare push
record git push-rejected $P git "$V" -- git push origin main
prepare base
record git pathspec-no-match $P git "$V" -- git add src/shop/pricing_test.py tests/test_stock.py
prepare apply
record git apply-fails $P git "$V" -- git apply patches/0001-pricing-never-round-a-discounted-price-up.patch
prepare hook
record git pre-commit-hook-fails $P git "$V" -- git commit -m "'stock: low_stock report'"

# Successes
prepare base
record git detached-head $P git "$V" -- git checkout v0.2.0
prepare base
record git log-ok $P git "$V" -- git log --graph --oneline --decorate --all
record git log-stat-ok $P git "$V" -- git log -3 --stat
record git blame-ok $P git "$V" -- git blame -L 18,35 src/shop/pricing.py
prepare worktree
record git status-ok $P git "$V" -- git status
record git diff-ok $P git "$V" -- git diff
unset CTXC_CORPUS_KEEP
rm -rf "$ORIGIN"

refresh_labels git
