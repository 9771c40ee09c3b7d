#!/usr/bin/env bash
# The full test command on a busy machine: N times, each on a fresh clone of this checkout's
# HEAD, `scripts/setup.sh test` (what CI runs) beside two CPU-bound loops and an fio job doing
# direct random I/O on the same disk. Prints one summary line per run (the commit, the exit
# status, the seconds, pytest's last line); a test may fail only for the reason it names.
#
#   bash bench/under_load.sh [N]      (default 5; needs fio; about 25 minutes a run on 2 cores)
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-5}
noise=${IOGATE_LOAD_FILE:-/var/tmp/iogate-under-load.dat}
for i in $(seq 1 "$runs"); do
    clone=$(mktemp -d /tmp/iogate-under-load.XXXXXX)
    git clone -q "$here" "$clone"
    python3 -c 'while True: pass' & hog1=$!
    python3 -c 'while True: pass' & hog2=$!
    fio --name=noise --filename="$noise" --size=256M --rw=randrw --bs=4k --ioengine=psync \
        --direct=1 --time_based --runtime=7200 >/dev/null 2>&1 & noisy=$!
    start=$(date +%s)
    # -v: each test's outcome is in the log by name as it ends, so a run stopped early
    # still says what failed
    (cd "$clone" && env -u PYTHONPATH CI=true PYTEST_ADDOPTS=-v bash scripts/setup.sh test \
        >"$clone.log" 2>&1)
    rc=$?
    kill "$hog1" "$hog2" "$noisy" 2>/dev/null
    wait "$noisy" 2>/dev/null
    echo "run $i ($(git -C "$clone" log --format=%h -1)): rc=$rc $(( $(date +%s) - start ))s" \
         "$(grep -E '^=+ .*(passed|failed).* =+$' "$clone.log" | tail -1) (log: $clone.log)"
    rm -rf "$clone"
done
rm -f "$noise"
