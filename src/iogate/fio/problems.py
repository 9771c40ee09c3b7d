"""The problems an import finds, each named at its job file line and option, raised together
as one :class:`~iogate.errors.SuiteError`."""

from __future__ import annotations

from iogate.errors import Problem, SuiteError
from iogate.fio.jobfile import Option

__all__ = ["Problems"]


class Problems:
    """Every problem found in one job file, in the order found, without repeats."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.items: list[Problem] = []

    def add(self, line: int, what: str, message: str, file: str = "") -> None:
        """A problem at ``line`` of the job file, or of the included ``file``."""
        p = Problem(file or self.filename, line, 0, what, message)
        if p not in self.items:
            self.items.append(p)

    def option(self, src: Option, message: str) -> None:
        self.add(src.line, f"[{src.section}] {src}" if len(str(src)) <= 60
                 else f"[{src.section}] {src.key}", message, src.file)

    def raise_any(self) -> None:
        if self.items:  # the job file's first, then each included file's, by line
            raise SuiteError(sorted(self.items, key=lambda p: (
                p.file != self.filename, p.file, p.line)))

