"""fio job files read as fio reads them: sections, options, comments, values.

The syntax, as fio 3.x parses it:

- ``[name]`` starts a job; ``[global]`` (exactly that, case matters) sets defaults for the
  jobs after it, and a file may have several. An option before the first section is an
  error.
- ``key=value`` (blanks around ``=`` allowed; the value is everything after the first
  ``=``), or a bare ``key`` for a flag. Option names are case-sensitive.
- A line whose first non-blank character is ``;`` or ``#`` is a comment; elsewhere on a line
  fio cuts at the first ``;`` or ``#`` too, even inside quotes, so ``bs=4k ; note`` is
  ``bs=4k``.
- ``include FILE`` inside a section reads FILE's options into that section, as if written
  there: FILE as given if it exists, else beside the file that includes it. Included files
  may include others and may not have sections. Problems name the file and line where each
  option is written.

Values keep fio's spelling here; :func:`fio_size`, :func:`fio_time`, :func:`directions`,
:func:`filename_list` and :func:`suite_text` read them with fio's rules (sizes in powers of
1024 for ``k`` but 1000 for ``KiB`` under the default ``kb_base``, times in seconds or
microseconds depending on the option, ``\\:`` escaping a colon in file names, ``${VAR}`` and
``$ncpus``). Errors are :class:`~iogate.errors.SuiteError` problems located at the file and
line, all of them at once.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from iogate.errors import Problem, SuiteError
from iogate.expr import printable, shown
from iogate.inputs import InputError, check_regular
from iogate.spec.loader import read_suite_text

__all__ = [
    "BARE_FLAGS",
    "KEYWORDS",
    "MAX_FILE_BYTES",
    "JobFile",
    "Option",
    "Section",
    "ValueProblem",
    "directions",
    "filename_list",
    "fio_expression",
    "fio_pattern",
    "fio_size",
    "fio_time",
    "has_reference",
    "parse_jobfile",
    "parse_lenient",
    "read_jobfile",
    "suite_text",
]

MAX_FILE_BYTES = 1 << 20  # job files are a few hundred lines; anything larger is not one
MAX_LINE_CHARS = 8192  # fio's own limit on an option line
# fio's reserved words, replaced by the machine's values; iogate has the same built-ins.
KEYWORDS = ("ncpus", "mb_memory", "pagesize")

_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
# Controls other than tab; a job file is text.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# Options fio accepts as a bare word (meaning 1); every other option needs a value.
BARE_FLAGS = frozenset((
    "time_based", "refill_buffers", "zero_buffers", "norandommap", "stonewall",
    "wait_for_previous", "new_group", "thread", "group_reporting", "exitall",
    "exitall_on_error", "bs_unaligned", "blocksize_unaligned", "verify_only",
    # logs named after the job when no name is given
    "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log",
    # engine flags
    "hipri", "fixedbufs", "registerfiles", "sqthread_poll", "nonvectored", "uncached",
    "nowait", "force_async", "userspace_reap",
))


class ValueProblem(ValueError):
    """A value fio would read differently from what iogate can express, or not at all."""


@dataclass(frozen=True)
class Option:
    """One ``key=value`` (``value`` None for a bare flag) at its line."""

    key: str
    value: str | None
    line: int
    section: str
    notes: tuple[str, ...] = ()  # the comment lines right above it
    file: str = ""  # the included file it is written in; "" for the job file itself
    # the settings this one's value adds up, in order, itself last (fio adds the files of
    # every filename= of a job, its global sections' first); empty for one setting alone
    adds_up: tuple[Option, ...] = ()

    def __str__(self) -> str:
        return self.key if self.value is None else f"{self.key}={self.value}"

    @property
    def where(self) -> str:
        """Where it is written, for a comment: 'line 5', 'line 2 of common.fio', or '--set'
        for a value the command line gives (line 0)."""
        if self.line == 0:
            return self.file or "the command line"
        return f"line {self.line}" + (f" of {os.path.basename(self.file)}" if self.file
                                      else "")


@dataclass
class Section:
    """``[name]`` and its options in file order; ``global`` sections are defaults."""

    name: str
    line: int
    options: list[Option] = field(default_factory=list)
    notes: tuple[str, ...] = ()

    @property
    def is_global(self) -> bool:
        return self.name == "global"


@dataclass
class JobFile:
    path: str
    sections: list[Section]

    @property
    def jobs(self) -> list[Section]:
        return [s for s in self.sections if not s.is_global]


def read_jobfile(path: Path | str) -> str:
    """The text of a job file: UTF-8, at most MAX_FILE_BYTES; errors name the file."""
    return read_suite_text(path, MAX_FILE_BYTES, "a fio job file")


def _strip_comment(text: str) -> str:
    """What fio keeps of a line: up to the first ';' or '#', blanks trimmed."""
    cut = min((i for i in (text.find(";"), text.find("#")) if i >= 0), default=len(text))
    return text[:cut].strip()


def parse_jobfile(path: Path | str, text: str | None = None) -> JobFile:
    """Parse a job file (read from ``path`` unless ``text`` is given); raise SuiteError with
    every syntax problem, each at its line."""
    jobfile, problems = parse_lenient(path, text)
    if problems:
        raise SuiteError(problems)
    return jobfile


# Included files within included files, at most this deep (fio has no limit but its stack).
MAX_INCLUDE_DEPTH = 16


def parse_lenient(path: Path | str, text: str | None = None) -> tuple[JobFile, list[Problem]]:
    """Parse what can be parsed, and the syntax problems: a line that is not understood is
    left out, so that the options around it can still be checked."""
    filename = str(path)
    if text is None:
        text = read_jobfile(path)
    problems: list[Problem] = []
    sections: list[Section] = []

    def lines_of(text: str, file: str, chain: tuple[str, ...]) -> None:
        """Read the lines of the job file (file "") or of an included one into sections."""
        shown_file = file or filename

        def bad(line: int, message: str, where: str = "") -> None:
            problems.append(Problem(shown_file, line, 0, where, printable(message)))

        notes: list[str] = []
        for number, raw in enumerate(text.split("\n"), 1):
            raw = raw.removesuffix("\r")
            if len(raw) > MAX_LINE_CHARS:
                bad(number, f"the line has {len(raw)} characters; fio reads at most "
                    f"{MAX_LINE_CHARS}")
                continue
            if found := _CONTROL.search(raw):
                bad(number, f"the control character U+{ord(found.group()):04X} is not "
                    "allowed in a job file")
                continue
            stripped = raw.strip()
            if not stripped:
                notes = []  # a blank line ends a comment block: it was about something else
                continue
            if stripped[0] in ";#":
                notes.append(stripped[1:].strip())
                continue
            line = _strip_comment(stripped)
            if line.startswith("[") and file:
                bad(number, "an included file has no sections (fio's rule): its options go "
                    "into the section that includes it")
                continue
            if line.startswith("["):
                if not line.endswith("]") or len(line) < 2:
                    bad(number, f"'{shown(line)}' is not a section header: write [name] on a "
                        "line of its own")
                    sections.append(Section("", number))  # its options belong to no job
                    notes = []
                    continue
                name = line[1:-1].strip()
                if not name:
                    bad(number, "empty section name: write [name]")
                sections.append(Section(name, number, notes=tuple(notes)))
                notes = []
                continue
            key, eq, value = line.partition("=")
            key = key.strip()
            where = f"[{sections[-1].name}]" if sections and sections[-1].name else ""
            if key == "include" or (not eq and key.startswith("include ")):
                included = (value if eq else key[len("include"):]).strip()
                notes = []
                if not sections:
                    bad(number, f"include {shown(included)} comes before any [section]: put "
                        "it under [global] or a job")
                    continue
                refused = include(included, file or filename, chain)
                if refused:
                    bad(number, f"include {shown(included)}: {refused}", where)
                continue
            if not _KEY.fullmatch(key):
                bad(number, f"'{shown(line)}' is not an option: expected key=value, a bare "
                    "flag, or a [section]", where)
                notes = []
                continue
            if not sections:
                bad(number, f"option '{shown(key)}' comes before any [section]: put it under "
                    "[global] or a job")
                notes = []
                continue
            section = sections[-1]
            section.options.append(Option(key, value.strip() if eq else None, number,
                                          section.name, tuple(notes), file))
            notes = []

    def include(name: str, including: str, chain: tuple[str, ...]) -> str | None:
        """Read an included file's lines; why not, if it cannot be."""
        if not name:
            return "a file name is needed"
        # fio: the name as given if that exists, else beside the including file.
        found = name if os.path.exists(name) or os.path.isabs(name) else os.path.join(
            os.path.dirname(including), name)
        real = os.path.realpath(found)
        if real in chain:
            return ("the file includes itself (through "
                    f"{' -> '.join(os.path.basename(c) for c in chain)})")
        if len(chain) > MAX_INCLUDE_DEPTH:
            return f"more than {MAX_INCLUDE_DEPTH} files deep"
        try:
            check_regular(found, "an included file")  # a FIFO would wait for a writer
            included = read_jobfile(found)
        except InputError as exc:
            return exc.problem
        except SuiteError as exc:
            return "; ".join(p.message for p in exc.problems)
        lines_of(included, found, (*chain, real))
        return None

    lines_of(text, "", (os.path.realpath(filename),))
    if not any(not s.is_global for s in sections):
        problems.append(Problem(filename, 0, 0, "", "no job section: fio would run nothing; "
                                "add a [job] after [global]"))
    return JobFile(filename, [s for s in sections if s.name]), problems


# -- values -------------------------------------------------------------------------------

# fio's size suffixes, case-insensitive, as fio 3.33 reads them: with the default
# kb_base=1024, 'k', 'kb' and 'ki' are powers of 1024 and only 'kib' is a power of 1000; with
# kb_base=1000 the other way round.
_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SIZE = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]+)([A-Za-z]*)")
_TIME_UNITS_US = {"d": 86_400_000_000, "h": 3_600_000_000, "m": 60_000_000, "s": 1_000_000,
                  "sec": 1_000_000, "ms": 1_000, "msec": 1_000, "us": 1, "usec": 1}


def _size_multiplier(suffix: str, kb_base: int) -> int | None:
    s = suffix.lower()
    if s in ("", "b"):
        return 1
    if s[0] not in _POWERS:
        return None
    rest = s[1:]
    if rest in ("", "b", "i"):
        base = kb_base
    elif rest == "ib":
        base = 1000 if kb_base == 1024 else 1024
    else:
        return None
    return int(base ** _POWERS[s[0]])


def fio_size(text: str, kb_base: int = 1024) -> int:
    """A literal size (or plain integer option) as fio reads it, in bytes (or units)."""
    t = text.strip()
    if not t:
        raise ValueProblem("the value is empty")
    if "%" in t:
        raise ValueProblem(f"'{shown(t)}' is a percentage of the file or device; iogate "
                           "needs a size")
    m = _SIZE.fullmatch(t)
    if m is None:
        if re.fullmatch(r"[0-9]+\.[0-9]*[A-Za-z]*", t):
            raise ValueProblem(f"fio reads no fractions: '{shown(t)}' is "
                               f"{t.split('.')[0]} to fio; write a whole number (e.g. in a "
                               "smaller unit)")
        if re.fullmatch(r"[0-9]+\s+\S.*", t):
            raise ValueProblem(f"fio stops reading '{shown(t)}' at the blank: remove it")
        if t.startswith("-"):
            raise ValueProblem(f"'{shown(t)}' is negative")
        raise ValueProblem(f"'{shown(t)}' is not a number fio reads, like 4k or 1g")
    digits, suffix = m.groups()
    number = int(digits, 16) if digits[:2].lower() == "0x" else int(digits)
    multiplier = _size_multiplier(suffix, kb_base)
    if multiplier is None:
        raise ValueProblem(f"'{shown(t)}': unknown unit '{shown(suffix)}' (fio takes k, m, g, "
                           "t, p, with i or b after them)")
    return number * multiplier


def fio_time(text: str, bare_us: int) -> int:
    """A literal time as fio reads it, in nanoseconds; ``bare_us`` is what a number without
    a unit means, in microseconds (seconds for runtime, 1 for thinktime)."""
    t = text.strip()
    m = re.fullmatch(r"([0-9]+)([A-Za-z]*)", t)
    if m is None:
        if re.fullmatch(r"[0-9]+\.[0-9]*[A-Za-z]*", t):
            raise ValueProblem(f"fio reads no fractions: '{shown(t)}' is {t.split('.')[0]} "
                               "to fio; write a whole number in a smaller unit")
        raise ValueProblem(f"'{shown(t)}' is not a time fio reads, like 30s or 500ms")
    digits, unit = m.groups()
    if not unit:
        return int(digits) * bare_us * 1000
    per = _TIME_UNITS_US.get(unit.lower())
    if per is None:
        raise ValueProblem(f"'{shown(t)}': unknown time unit '{shown(unit)}' (fio takes d, h, "
                           "m, s, ms, us)")
    return int(digits) * per * 1000


_HEX_RUN = re.compile(r"0[xX]([0-9a-fA-F]+)")
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


def fio_pattern(text: str) -> bytes:
    """fio's buffer_pattern as the bytes it writes: strings in double quotes (their bytes),
    hex numbers (0x..., digits in pairs from the left, an odd first digit a byte of its
    own; '0xff0x14' is two numbers) and decimal numbers (a 32-bit integer, least
    significant byte first, as many bytes as it needs; a decimal ends where a '0x' starts),
    one after another. A file in single quotes and the offset format %o are refused."""
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        rest = text[i:]
        if rest[0] == '"':
            end = rest.find('"', 1)
            if end < 0:
                raise ValueProblem(f"'{shown(rest)}': a string without its closing quote")
            out += rest[1:end].encode()
            i += end + 1
        elif rest[0] == "'":
            raise ValueProblem("a pattern read from a file: iogate takes the bytes written "
                               "out, in hex (0xdeadbeef) or a \"string\"")
        elif rest[0] == "%":
            raise ValueProblem(f"'{shown(rest[:2])}' puts each block's offset in the pattern; "
                               "iogate's pattern is the same bytes in every block")
        elif m := _HEX_RUN.match(rest):
            digits = m.group(1)
            taken = len(digits) + 2
            if digits.endswith("0") and rest[taken:taken + 1] in ("x", "X"):
                digits, taken = digits[:-1], taken - 1  # the '0' starts the next number
            if not digits:
                raise ValueProblem(f"'{shown(rest)}': '0x' needs hex digits")
            if len(digits) % 2:
                digits = "0" + digits
            out += bytes.fromhex(digits)
            i += taken
        else:
            cut = rest.lower().find("0x", 1)
            m = _DECIMAL.match(rest[:cut] if cut > 0 else rest)
            if m is None:
                raise ValueProblem(f"'{shown(rest)}' is not a \"string\", a 0x hex number or "
                                   "a decimal number")
            value = int(m.group())
            if not _INT_MIN <= value <= _INT_MAX:
                raise ValueProblem(f"{m.group()}: fio's decimal patterns are 32-bit integers")
            value &= 0xFFFFFFFF
            out += value.to_bytes(max(1, (value.bit_length() + 7) // 8), "little")
            i += m.end()
    if not out:
        raise ValueProblem("the pattern is empty")
    return bytes(out)


def has_reference(text: str) -> bool:
    """Whether a value refers to the environment (``${VAR}``) or a fio keyword."""
    return "$" in text


_REF = re.compile(r"\$\{([^}]*)\}|\$(" + "|".join(KEYWORDS) + r")|\$")


def suite_text(text: str) -> str:
    """A fio value as text for a suite value: ``${VAR}`` stays a reference (iogate reads it
    when the suite is loaded), ``$ncpus`` and the other keywords become ``${ncpus}``, and any
    other ``$`` is doubled, since iogate reads ``$name`` as a reference and fio does not."""
    out: list[str] = []
    pos = 0
    for m in _REF.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        if m.group(1) is not None:
            name = m.group(1)
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueProblem(f"'${{{shown(name)}}}' is not an environment variable "
                                   "reference: expected ${NAME}")
            out.append("${" + name + "}")
        elif m.group(2) is not None:
            out.append("${" + m.group(2) + "}")
        else:
            out.append("$$")
    out.append(text[pos:])
    return "".join(out)


# -- expressions --------------------------------------------------------------------------

_EXPR_TOKEN = re.compile(r"\s*(?:(\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*)"
                         r"|(0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]+)?[A-Za-z]*)|([-+*/()%^]))")


def fio_expression(text: str, literal: Callable[[str], str]) -> str:
    """A fio value with arithmetic or references as a suite expression.

    fio evaluates ``(1024*4)`` (arithmetic in parentheses) and math around its keywords
    (``8*$mb_memory``). Each literal is turned into a plain number by ``literal`` (fio's
    units for the option: bytes, a count, microseconds), references as :func:`suite_text`
    does, and ``+ - * /`` and parentheses are kept; fio's ``%`` and ``^`` have no iogate
    equivalent.
    """
    out: list[str] = []
    pos = 0
    t = text.strip()
    while pos < len(t):
        m = _EXPR_TOKEN.match(t, pos)
        if m is None or m.end() == pos:
            raise ValueProblem(f"'{shown(t)}' is not an expression iogate can read "
                               f"(at '{shown(t[pos:].strip(), 12)}')")
        ref, number, op = m.groups()
        pos = m.end()
        if ref is not None:
            out.append(suite_text(ref))
        elif number is not None:
            value = literal(number)
            out.append(value)
        elif op in ("%", "^"):
            raise ValueProblem(f"'{shown(t)}': fio's '{op}' has no iogate equivalent; "
                               "compute the value")
        else:
            out.append(f" {op} " if op in "+-*/" else op)
    result = "".join(out).replace("( ", "(").replace(" )", ")").strip()
    return re.sub(r"\s+", " ", result)


# -- lists and directions -----------------------------------------------------------------

def directions(value: str, what: str, separators: str = ",", trims: bool = False
               ) -> list[str]:
    """fio's per-direction form ``read[,write[,trim]]``, as [read, write], or for a job
    that trims as [read, trim] (a trim takes the suite's write value): a part left empty is
    returned empty; the last value given stands for the directions after it ("a value not
    ended by a comma applies to the types after it": ``4k,8k`` trims 8k)."""
    parts = [p.strip() for p in re.split("[" + re.escape(separators) + "]", value)]
    if len(parts) > 3:
        raise ValueProblem(f"'{shown(value)}': at most three {what} (read,write,trim)")
    parts += [parts[-1]] * (3 - len(parts))
    return [parts[0], parts[2] if trims else parts[1]]


def filename_list(value: str) -> list[str]:
    """``filename=a:b:c`` as fio splits it: at every ``:`` not escaped as ``\\:``."""
    names: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value) and value[i + 1] == ":":
            current.append(":")
            i += 2
            continue
        if c == ":":
            names.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    names.append("".join(current))
    return [n.strip() for n in names]
