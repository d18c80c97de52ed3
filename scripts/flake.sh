#!/usr/bin/env bash
# scripts/flake.sh N: is the suite deterministic on a fresh checkout? Clones this repository's committed
# HEAD N times into a temporary directory and runs `make test` in each clone, one after the other (never
# in parallel: the tests count processes and namespaces machine-wide, and a 2-core machine has no room for
# two), keeps each clone's log, removes the clones, and tallies every failing test by name across the
# clones: pytest's "FAILED tests/..." and "ERROR tests/..." lines, cargo's "test NAME ... FAILED" and
# "---- NAME stdout ----" lines; a clone whose `make test` failed with no test named (a build or lint
# error) counts under "make test (no test named)". Exit 0 when every clone passed, 1 when any failed,
# 2 on bad input.
#
#   scripts/flake.sh 5                     five clones; logs under $FLAKE_LOGS (default: a new temp dir)
#   scripts/flake.sh --tally LOG...        only the tally, of logs kept by an earlier run (or any make test log)
#
# Owns cloning, running and tallying; never edits the repository it clones, never runs two clones at once.
set -uo pipefail

usage() {
    echo "usage: scripts/flake.sh N (clones, a whole number >= 1) | scripts/flake.sh --tally LOG..." >&2
    exit 2
}

# The failing tests a log names, one per line, each once per log.
failures_of() {
    local log=$1
    {
        sed -n -E 's/^(FAILED|ERROR) (tests\/[^ ]+).*/\2/p' "$log"
        sed -n -E 's/^test ([^ ]+) \.\.\. FAILED$/\1/p' "$log"
        sed -n -E 's/^---- ([^ ]+) stdout ----$/\1/p' "$log"
    } | sort -u
}

# A table of failures by test across the runs, each given as LOG:STATUS (the make exit status, empty when
# unknown: --tally of a kept log): in how many runs each test failed.
tally() {
    local runs=$# failed_runs=0 log status names all entry
    all=$(mktemp)
    for entry in "$@"; do
        log=${entry%:*}
        status=${entry##*:}
        names=$(failures_of "$log")
        if [ -z "$names" ] && [ -n "$status" ] && [ "$status" != 0 ]; then
            names="make test (no test named, exit $status)"
        fi
        if [ -n "$names" ]; then
            failed_runs=$((failed_runs + 1))
            printf '%s\n' "$names" >>"$all"
        fi
    done
    if [ "$failed_runs" -eq 0 ]; then
        echo "flake: $runs of $runs runs passed; no test failed"
        rm -f "$all"
        return 0
    fi
    echo "flake: $failed_runs of $runs runs failed"
    printf '%-8s %s\n' "runs" "test"
    sort "$all" | uniq -c | sort -k1,1nr -k2 | awk -v n="$runs" '{c=$1; $1=""; sub(/^ /, ""); printf "%d/%-6d %s\n", c, n, $0}'
    rm -f "$all"
    return 1
}

if [ $# -ge 1 ] && [ "$1" = "--tally" ]; then
    shift
    [ $# -ge 1 ] || usage
    for log in "$@"; do
        [ -r "$log" ] || { echo "flake: cannot read $log: give the logs of make test runs" >&2; exit 2; }
    done
    given=()
    for log in "$@"; do given+=("$log:"); done
    tally "${given[@]}"
    exit $?
fi

[ $# -eq 1 ] || usage
case $1 in '' | *[!0-9]* | 0) usage ;; esac
runs=$1

repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || { echo "flake: not inside a git checkout" >&2; exit 2; }
head=$(git -C "$repo" rev-parse HEAD)
work=$(mktemp -d "${TMPDIR:-/tmp}/crest-flake-XXXXXX")
logs=${FLAKE_LOGS:-$work/logs}
mkdir -p "$logs"
clones=$work/clones
# The clones go however the script ends (Ctrl-C included); the logs stay.
trap 'rm -rf "$clones"; rmdir "$work" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

echo "flake: $runs clones of $head (committed HEAD of $repo; uncommitted changes are not tested), logs in $logs"
entries=()
for i in $(seq 1 "$runs"); do
    clone=$clones/$i
    log=$logs/run-$i.log
    git clone --quiet --no-hardlinks "$repo" "$clone" && git -C "$clone" checkout --quiet "$head" || {
        echo "flake: cloning $repo failed" >&2
        exit 1
    }
    start=$(date +%s)
    (cd "$clone" && make test) >"$log" 2>&1 </dev/null
    status=$?
    echo "flake: run $i of $runs: make test exit $status in $(($(date +%s) - start)) s ($log)"
    entries+=("$log:$status")
    rm -rf "$clone"
done
tally "${entries[@]}"
