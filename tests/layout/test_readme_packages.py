"""The README and the getting-started page name every system package the set-up script may
install, and no other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_page_lists_what_the_setup_installs(page: str) -> None:
    script = (ROOT / "scripts" / "setup.sh").read_text()
    installed = set(re.findall(r"need_pkgs\+=\(([\w.+-]+)\)", script))
    assert {"liburing-dev", "gcc", "postgresql"} <= installed  # the pattern still reads it
    readme = (ROOT / page).read_text()
    paragraph = readme[readme.index("Set-up installs the system packages"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    listed = set(re.findall(r"`([\w.+-]+)`", paragraph)) - {"apt-get", ".venv"}
    assert installed - listed == set(), f"installed by setup.sh but not in {page}"
    assert listed - installed == set(), f"in {page} but never installed by setup.sh"
