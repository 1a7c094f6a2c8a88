# shellcheck shell=bash
# Sourced by the scripts that compare a build of an older commit with
# another: the older one is built from the commit's tree, unpacked with
# `git archive` into a directory of its own (no worktree: nothing in .git
# changes, and a run that is killed leaves nothing behind but a temp dir).

# build_at_ref REF SRC GO_BUILD_ARGS...: unpacks commit REF of the
# repository the script sits in into SRC (made if missing) and runs
# `go build GO_BUILD_ARGS...` there (e.g. -trimpath -o OUT ./cmd/X).
# Exits 1 with one line on stderr when REF is not a commit.
build_at_ref() {
  local ref=$1 src=$2 script=${0##*/} root
  shift 2
  root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
  git -C "$root" rev-parse --verify -q "$ref^{commit}" >/dev/null || { echo "${script%.sh}: $ref is not a commit" >&2; exit 1; }
  mkdir -p "$src"
  git -C "$root" archive "$ref" | tar -x -C "$src"
  (cd "$src" && go build "$@")
}

# describe_ref REF: "HASH SUBJECT" of commit REF.
describe_ref() {
  git -C "$(dirname "$0")" log -1 --format='%h %s' "$1"
}

# describe_tree PATH...: "the working tree (HASH)", with " + uncommitted
# changes" inside the brackets when any of PATHs differs from HEAD.
describe_tree() {
  local dir
  dir=$(dirname "$0")
  echo "the working tree ($(git -C "$dir" log -1 --format='%h' HEAD)$(git -C "$dir" diff --quiet HEAD -- "$@" || echo ' + uncommitted changes'))"
}
