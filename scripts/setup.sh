#!/usr/bin/env bash
# Sets up iogate from a source checkout and then runs something with it.
#
#   bash scripts/setup.sh smoke   set up, then run the smoke suite on a temporary file
#   bash scripts/setup.sh test    set up, then check the C formatting, run the C tests
#                                 (sanitized), lint, types, the documentation build and the
#                                 full test suite
#   bash scripts/setup.sh wheel   set up, then build a self-contained wheel into dist/
#                                 (scripts/wheel.sh)
#   bash scripts/setup.sh docs    set up, then build the documentation site into build/docs
#                                 (Sphinx, warnings are errors); `test` builds it too
#   bash scripts/setup.sh         set up only
#
# Set-up means: the system libraries the engine links against (installed with apt when missing
# and running as root; otherwise the exact command to run is printed), a virtual environment in
# .venv, and iogate built and installed into it from this checkout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
mode=${1:-setup}
venv=${IOGATE_VENV:-$here/.venv}
python=${PYTHON:-python3}

# each line with the seconds since the start, so that a CI log says where its time went
say() { printf 'setup: [%4ds] %s\n' "$SECONDS" "$*" >&2; }

need_pkgs=()
[ -f /usr/include/liburing.h ] || need_pkgs+=(liburing-dev)
[ -f /usr/include/libaio.h ] || need_pkgs+=(libaio-dev)
[ -f /usr/include/zlib.h ] || need_pkgs+=(zlib1g-dev)
[ -f /usr/include/isa-l/crc.h ] || need_pkgs+=(libisal-dev)
[ -f /usr/include/xxhash.h ] || need_pkgs+=(libxxhash-dev)
[ -f /usr/include/openssl/evp.h ] || need_pkgs+=(libssl-dev)
# device health before and after each case (plugins/iogate_health), in both modes
command -v smartctl >/dev/null 2>&1 || need_pkgs+=(smartmontools)
command -v nvme >/dev/null 2>&1 || need_pkgs+=(nvme-cli)
if [ "$mode" = test ]; then
    # fault injection in the tests: a FUSE filesystem
    [ -f /usr/include/fuse3/fuse.h ] || need_pkgs+=(libfuse3-dev)
    command -v fusermount3 >/dev/null 2>&1 || need_pkgs+=(fuse3)
    # the fio backend, fleets of fio servers, and the cross-checks against fio
    command -v fio >/dev/null 2>&1 || need_pkgs+=(fio)
    # power-loss verification: an ext4 loop mount shut down without flushing its log
    command -v xfs_io >/dev/null 2>&1 || need_pkgs+=(xfsprogs)
    command -v mkfs.ext4 >/dev/null 2>&1 || need_pkgs+=(e2fsprogs)
    # the zsh completion script is loaded by a real zsh
    command -v zsh >/dev/null 2>&1 || need_pkgs+=(zsh)
    # the history store on a shared database: a throwaway PostgreSQL cluster per test session
    compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_pkgs+=(postgresql)
    # the C formatting check (native/.clang-format): Debian's clang-format, unless one is on
    # PATH or in the virtual environment already (14, Debian 12's, and 23 format native/ alike)
    command -v clang-format >/dev/null 2>&1 || [ -x "$venv/bin/clang-format" ] ||
        need_pkgs+=(clang-format)
fi
command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1 || need_pkgs+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need_pkgs+=(pkg-config)
if ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then need_pkgs+=(python3-venv); fi

if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "installing ${need_pkgs[*]} with apt-get"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
    else
        say "missing system packages: ${need_pkgs[*]}"
        say "install them with:  sudo apt-get install ${need_pkgs[*]}"
        exit 1
    fi
fi

if [ ! -x "$venv/bin/python" ]; then
    say "creating virtual environment $venv"
    "$python" -m venv "$venv"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
"$venv/bin/python" -m pip install -q --upgrade pip >/dev/null
say "building and installing iogate (native engine included)"
case "$mode" in
docs) extras=docs ;;
test) extras=test,docs,lint ;; # in one install: each `pip install .` builds the engine anew
*) extras=test ;;
esac
"$venv/bin/python" -m pip install -q ".[$extras]"

# The documentation site, every warning an error: a broken link or anchor, a page left out
# of the table of contents, a reference page whose table no longer renders.
build_docs() {
    say "documentation: docs/ -> build/docs (Sphinx, warnings are errors)"
    rm -rf build/docs
    "$venv/bin/sphinx-build" -W --keep-going -n -q -b html docs build/docs
}

case "$mode" in
setup)
    say "done: $venv/bin/iogate --help"
    ;;
smoke)
    exec "$venv/bin/iogate" run suites/smoke.suite.yaml "${@:2}"
    ;;
docs)
    build_docs
    say "done: build/docs/index.html"
    ;;
wheel)
    say "a self-contained wheel: the engine and the libraries it links against"
    exec bash scripts/wheel.sh "$venv/bin/python" dist
    ;;
test)
    say "C formatting: every C file of native/ as clang-format writes it (native/.clang-format)"
    clang_format=$(command -v clang-format 2>/dev/null || echo "$venv/bin/clang-format")
    if ! "$clang_format" --dry-run --Werror native/include/*.h native/src/*.[ch] \
        native/tests/*.[ch]; then
        say "run: $clang_format -i native/include/*.h native/src/*.[ch] native/tests/*.[ch]"
        exit 1
    fi
    say "C tests under AddressSanitizer and UndefinedBehaviorSanitizer"
    "$venv/bin/python" -m pip install -q cmake ninja
    build=build/native-sanitize
    "$venv/bin/cmake" -S native -B "$build" -G Ninja -DIOGATE_BUILD_TESTS=ON \
        -DIOGATE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
    "$venv/bin/cmake" --build "$build" >/dev/null
    "$venv/bin/ctest" --test-dir "$build" --output-on-failure
    say "C tests under ThreadSanitizer"
    tsan=build/native-tsan
    "$venv/bin/cmake" -S native -B "$tsan" -G Ninja -DIOGATE_BUILD_TESTS=ON \
        -DIOGATE_TSAN=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
    "$venv/bin/cmake" --build "$tsan" >/dev/null
    # the threaded tests; single-threaded private code (histograms, statistics, buffer
    # contents, the random map) gains nothing from TSan and runs ten times slower under it
    "$venv/bin/ctest" --test-dir "$tsan" --output-on-failure -E '^test_(hist|stats|data|randmap)$'
    say "an end-to-end suite against the sanitized engines"
    bash scripts/sanitized-run.sh "$venv" "$build" "$tsan"
    say "lint (ruff) and types (mypy)"
    "$venv/bin/ruff" check src plugins tests bench docs conftest.py
    "$venv/bin/mypy"
    build_docs
    # one worker per CPU, at most 4 (the tests share the machine's disk); IOGATE_TEST_WORKERS=N
    cpus=$(nproc 2>/dev/null || echo 1)
    workers=${IOGATE_TEST_WORKERS:-$((cpus > 4 ? 4 : cpus))}
    say "Python tests against the installed package ($workers workers)"
    exec "$venv/bin/python" -m pytest -n "$workers" "${@:2}"
    ;;
*)
    say "unknown mode '$mode': use smoke, test, wheel, docs or nothing"
    exit 2
    ;;
esac
