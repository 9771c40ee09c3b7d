"""Text laid out for where it is read: the width of the output, and tables and lines that
fit it.

- The width is the terminal's when the output is one (``COLUMNS`` first, as everywhere),
  else :data:`LOG_WIDTH`, what a CI log shows without scrolling.
- A table's cells are never cut. Its free-text columns (the ``free`` ones: reasons, errors,
  lists of metrics) wrap within their column while each keeps at least :data:`FREE_MIN`
  characters; when the row is still too wide, the last free column goes on lines of its own
  under each row, after its header (``problems: ...``), wrapped to the width.
- Any other long line is wrapped at spaces, its continuation indented under its first word.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Collection, Iterable, Sequence
from typing import IO

LOG_WIDTH = 120  # where the output is not a terminal: a CI log, a file, a pipe
MIN_WIDTH = 60  # narrower terminals are laid out for this width all the same
FREE_MIN = 24  # the narrowest a free-text column wraps to before it moves under its row
GAP = "  "  # between two columns


def width(stream: IO[str] | None = None) -> int:
    """The width to lay ``stream``'s text out for: ``COLUMNS`` when set, the terminal's
    when ``stream`` is one, else :data:`LOG_WIDTH`."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    try:
        if stream is not None and stream.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(stream.fileno()).columns)
    except (OSError, ValueError, AttributeError):  # closed, or no descriptor (a capture)
        pass
    return LOG_WIDTH


def _wrap(text: str, room: int, indent: str = "") -> list[str]:
    return textwrap.wrap(text, max(1, room), initial_indent=indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def fit(text: str, columns: int, taken: int = 0) -> str:
    """``text`` with every line longer than ``columns`` wrapped at spaces, its continuation
    lines indented two more than the line (a word longer than the room stays whole). The
    first line has ``taken`` columns less: what the output puts before it (pytest's
    ``FAILED node - ``)."""
    out: list[str] = []
    for n, line in enumerate(text.split("\n")):
        room = columns - (taken if n == 0 else 0)
        if len(line) <= room:
            out.append(line)
            continue
        body = line.lstrip(" ")
        lead = " " * (len(line) - len(body))
        first, *rest = textwrap.wrap(body, max(1, room - len(lead)), break_long_words=False,
                                     break_on_hyphens=False)
        out.append(lead + first)
        if rest:
            out += _wrap(" ".join(rest), columns - len(lead) - 2, lead + "  ")
    return "\n".join(out)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, columns: int,
          free: Collection[int] = (), right: Collection[int] = (), notes: bool = False) -> str:
    """A plain-text table with a header rule, columns sized to their content and at most
    ``columns`` wide where its ``free`` columns (indices, negative from the end) can make it
    so: they wrap within themselves. With ``notes``, the last column holds a note (a reason,
    an error): one too long for the room left goes under its row. Of the layouts (every note
    in its row, the free columns narrowed for it; or the long notes under their rows), the
    one with the fewest lines is chosen. ``right`` columns are aligned on the right."""
    body = [list(r) for r in rows]
    n = len(headers)
    note = n - 1 if notes else None
    layouts = [_layout(headers, body, columns, free, right, note, inline)
               for inline in ((True, False) if note is not None else (False,))]
    fewest = min(range(len(layouts)), key=lambda k: len(layouts[k]))
    return "\n".join(layouts[fewest])


def _layout(headers: Sequence[str], body: list[list[str]], columns: int,
            free: Collection[int], right: Collection[int], note: int | None,
            inline: bool) -> list[str]:
    """The lines of a table (:func:`table`); with ``inline``, the free columns are narrowed
    to make room for the longest note first."""
    n = len(headers)
    fixed = [i for i in range(n) if i != note]
    wraps = sorted({i % n for i in free} - {note})
    right = {i % n for i in right}
    widths = {i: max([len(headers[i]), *(len(r[i]) for r in body)]) for i in fixed}
    used = sum(widths.values()) + len(GAP) * (len(fixed) - 1)
    want = 0 if note is None else max([len(headers[note]), *(len(r[note]) for r in body)])
    over = used + (len(GAP) + want if inline else 0) - columns
    # down to FREE_MIN first, then (still too wide) to the longest word of the column
    longest = {i: max([0, *(len(w) for r in body for w in r[i].split())]) for i in wraps}
    for floor in (FREE_MIN, 0):
        for i in reversed(wraps):
            cut = min(over, widths[i] - max(floor, longest[i], len(headers[i])))
            if cut > 0:
                widths[i] -= cut
                used -= cut
                over -= cut
    shown = list(fixed)
    below: set[int] = set()  # the rows whose note goes under them
    if note is not None:
        room = columns - used - len(GAP)
        if room >= len(headers[note]):
            below = {k for k, r in enumerate(body) if len(r[note]) > room}
            widths[note] = max([len(headers[note]),
                                *(len(r[note]) for k, r in enumerate(body) if k not in below)])
            shown.append(note)
        else:  # no room for the column at all
            below = {k for k, r in enumerate(body) if r[note]}

    def lines(cells: Sequence[str], hide_note: bool = False) -> list[str]:
        wrapped = [[""] if hide_note and i == note
                   else _wrap(cells[i], widths[i]) if i in wraps and len(cells[i]) > widths[i]
                   else [cells[i]] for i in shown]
        out = []
        for k in range(max(len(w) for w in wrapped)):
            parts = []
            for i, w in zip(shown, wrapped, strict=True):
                cell = w[k] if k < len(w) else ""
                parts.append(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]))
            out.append(GAP.join(parts).rstrip())
        return out

    out = lines(headers) + lines(["-" * widths[i] if i in widths else "" for i in range(n)])
    for k, r in enumerate(body):
        out += lines(r, hide_note=k in below)
        if k in below and note is not None:
            out += _wrap(f"{headers[note]}: {r[note]}", columns - 4, "    ")
    return out
