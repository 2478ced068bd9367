#!/usr/bin/env bash
# Peak RSS of `creditdata datasets get`, `datasets all`, `export` and `Client::wait_for_data`
# against large answers, this tree against a baseline revision, side by side in one run
# (BENCHMARKS.md, "Memory follows the data"). One command, from the repository root:
#
#   bash cli/examples/peak_rss.sh [BASELINE_REV] [-- peak_rss options]
#
# BASELINE_REV defaults to the merge base with main. The baseline is exported (`git archive`)
# to target/peak-rss/baseline-REV with this tree's wait_for_data example added (it uses only the
# client's public API), and built in a target directory of its own seeded with hard links to this
# tree's compiled dependencies, never its own packages (docs/traps.md: a copy sharing a target
# directory overwrites this one's artifacts). Both sides are debug builds, as the tests use.
# Needs GNU time (`/usr/bin/time`, Debian's `time`) and `prlimit` (util-linux).
set -euo pipefail
for tool in /usr/bin/time prlimit; do
    command -v "$tool" >/dev/null || { echo "peak_rss.sh needs $tool" >&2; exit 2; }
done
root=$(git rev-parse --show-toplevel)
cd "$root"
rev=${1:-$(git merge-base HEAD main)}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
rev=$(git rev-parse --short=12 "$rev")
base="$root/target/peak-rss/baseline-$rev"

# This tree: the command, the wait example, the harness.
cargo build --workspace --bin creditdata --example wait_for_data --example peak_rss

if [ ! -x "$base/target/debug/creditdata" ] || [ ! -x "$base/target/debug/examples/wait_for_data" ]; then
    rm -rf "$base"
    mkdir -p "$base"
    git archive "$rev" | tar -x -C "$base"
    cp generated-client/examples/wait_for_data.rs "$base/generated-client/examples/"
    mkdir -p "$base/target/debug"
    for dir in deps build .fingerprint; do
        cp -al "target/debug/$dir" "$base/target/debug/$dir"
    done
    # The workspace's own units are built by the copy, never shared (rustc would write through
    # the hard links into this tree's files).
    (
        cd "$base/target/debug"
        rm -rf .fingerprint/creditdata-* .fingerprint/xtask-* build/creditdata-* build/xtask-*
        rm -f deps/it-* deps/creditdata* deps/libcreditdata* deps/xtask-* deps/libxtask*
    )
    (cd "$base" && cargo build --workspace --bin creditdata --example wait_for_data)
fi

exec "$root/target/debug/examples/peak_rss" \
    --before "$base/target/debug" --after "$root/target/debug" "$@"
