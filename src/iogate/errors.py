"""The exceptions iogate raises, Problem (one located complaint about a suite file), and
how a message lists choices (:func:`spoken`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


class IogateError(Exception):
    """Base class of every error iogate raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a suite file. ``line``/``col`` are 1-based; 0 means unknown."""

    file: str
    line: int
    col: int
    path: str  # dotted location in the document, e.g. ``workloads[1].iodepth``; may be ""
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line > 0:
            where += f":{self.line}:{max(self.col, 1)}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class SuiteError(IogateError):
    """A suite file is invalid; carries every problem found, not just the first."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def single(cls, file: str, message: str, line: int = 0, col: int = 0,
               path: str = "") -> SuiteError:
        return cls([Problem(str(file), line, col, path, message)])

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


class EngineError(IogateError):
    """The I/O engine refused or failed; ``errno`` is the positive errno value."""

    def __init__(self, errno: int, message: str) -> None:
        self.errno = errno
        self.message = message
        super().__init__(errno, message)

    def __str__(self) -> str:
        return self.message


class LibraryError(IogateError):
    """The engine's library (:mod:`iogate.engine.native`) cannot be used: missing, not a
    shared library, not libiogate, of another ABI version or an older revision, or with a
    constant of another value. Not an engine's refusal of a job: iogate cannot run at all
    (the command's exit code is 3, a runtime error)."""


class RealizedWorkloadWarning(UserWarning):
    """What ran differs from what the suite asked for by more than sampling noise explains."""


class SuiteWarning(UserWarning):
    """A suite that is valid but likely does not mean what it says (rates that set another
    mix than the rwmixread beside them), located like a problem."""


class PowerWarning(UserWarning):
    """A check against a baseline whose runs can never make a regression at its threshold
    significant: said before any I/O, with the runs it needs."""


class TargetError(IogateError):
    """The target file or device of a workload is unusable."""


def spoken(words: Iterable[str], conjunction: str = "or") -> str:
    """Words as a sentence lists them: 'a, b or c'."""
    all_ = list(words)
    return f"{', '.join(all_[:-1])} {conjunction} {all_[-1]}" if len(all_) > 1 else "".join(all_)


class UsageError(IogateError):
    """A setting that cannot work; ``option`` is the option's name (``baseline``), which
    each front end spells its own way."""

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        self.problem = problem
        super().__init__(option, problem)

    def __str__(self) -> str:
        return self.problem
