"""Writes the README's table of plain workload keys from their declarations
(iogate.spec.keys.reference_table), between its two markers; --check only says whether the
README has it as made (exit 1 if not)."""

from __future__ import annotations

import sys
from pathlib import Path

from iogate.spec.keys import reference_table

README = Path(__file__).resolve().parents[1] / "README.md"
BEGIN, END = "<!-- plain keys: begin -->\n", "<!-- plain keys: end -->\n"


def with_table(text: str) -> str:
    """``text`` (the README) with the table between the markers made from the keys."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + reference_table() + END + tail


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    made = with_table(text)
    if "--check" in argv:
        return 0 if made == text else 1
    README.write_text(made, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
