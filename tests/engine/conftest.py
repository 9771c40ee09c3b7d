"""Point the bindings at the development build of libiogate when no library is named."""

from __future__ import annotations

import os
from pathlib import Path

_BUILD = Path(__file__).resolve().parents[2] / "native" / "build" / "libiogate.so"

if not os.environ.get("IOGATE_LIB") and _BUILD.is_file():
    os.environ["IOGATE_LIB"] = str(_BUILD)
