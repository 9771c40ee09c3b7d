"""The README names every system package the set-up script may install, and no other."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_lists_what_the_setup_installs() -> None:
    script = (ROOT / "scripts" / "setup.sh").read_text()
    installed = set(re.findall(r"need_pkgs\+=\(([\w.+-]+)\)", script))
    assert {"liburing-dev", "gcc", "postgresql"} <= installed  # the pattern still reads it
    readme = (ROOT / "README.md").read_text()
    paragraph = readme[readme.index("Set-up installs the system packages"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    listed = set(re.findall(r"`([\w.+-]+)`", paragraph)) - {"apt-get", ".venv"}
    assert installed - listed == set(), "installed by setup.sh but not in the README"
    assert listed - installed == set(), "in the README but never installed by setup.sh"
