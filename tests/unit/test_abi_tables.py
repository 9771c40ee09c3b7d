"""native/cmake/abi_tables.cmake, the build step that reads the library's ABI tables from
iogate.h: on the real header it lists every member of every struct, in order, as the built
library describes them, and every constant; a declaration it cannot read fails the build
naming it, so that no member is ever left out of the description silently."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iogate.engine import native

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "native/cmake/abi_tables.cmake"
CMAKE = shutil.which("cmake") or str(Path(sys.executable).parent / "cmake")
pytestmark = pytest.mark.skipif(not Path(CMAKE).exists() and shutil.which(CMAKE) is None,
                                reason="cmake is not installed")


def _tables(header: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CMAKE, f"-DHEADER={header}", f"-DOUT={out}", "-P", str(SCRIPT)],
                          capture_output=True, text=True, check=False)


def test_the_real_header_gives_every_member_as_the_library_describes_it(tmp_path: Path) -> None:
    out = tmp_path / "abi_tables.inc"
    proc = _tables(ROOT / "native/include/iogate.h", out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    for name in [*native.STRUCTS, "iog_job_spec"]:
        _, members = native.described(native.lib(), name)
        listed = re.findall(rf"FIELD\({name}, (\w+), ", text)
        assert listed == [m.name.decode() for m in members], name
    constants = re.findall(r"CONSTANT\((\w+)\)", text)
    assert len(constants) == len(set(constants))
    assert set(constants) == set(native.described_constants(native.lib()))


@pytest.mark.parametrize(("declaration", "problem"), [
    ("uint32_t a, b;", "cannot read the member 'uint32_t a, b'"),
    ("uint8_t cube[2][2][2];", "cube has more than two dimensions"),
])
def test_a_member_it_cannot_read_fails_naming_it(tmp_path: Path, declaration: str,
                                                 problem: str) -> None:
    header = tmp_path / "h.h"
    header.write_text(f"#define IOG_X 1\nstruct iog_odd {{\n    uint32_t first;\n"
                      f"    {declaration}\n}};\n")
    proc = _tables(header, tmp_path / "out.inc")
    assert proc.returncode != 0
    said = " ".join(proc.stderr.split())  # cmake wraps its messages
    assert problem in said, said
    assert f"{header}: struct iog_odd: " in said
    assert not (tmp_path / "out.inc").exists()
