"""One fio job under translation: the workload it becomes (:class:`Entry`,
:class:`Workload`) and :class:`JobState`, the job's options and what the conversion has
learnt so far (kb_base, rw, engine, files, clones, offset, runtime) with the helpers every
option group's handlers share: reading an option, its value as an exact number or a suite
expression, putting a key, a note, a refusal.

The handlers themselves are mixins of :class:`JobState`, a module per option group; the
order they run in is :mod:`iogate.fio.translate`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from iogate.expr import COUNT, DURATION, SIZE, ExprError, evaluate_int, shown
from iogate.fio.jobfile import (
    BARE_FLAGS,
    KEYWORDS,
    Option,
    Section,
    ValueProblem,
    fio_expression,
    fio_size,
    fio_time,
    has_reference,
    suite_text,
)
from iogate.fio.problems import Problems
from iogate.fio.vocabulary import (
    FIO_DEFAULT_ENGINE,
)
from iogate.spec.keys import PLAIN
from iogate.spec.modes import TRIM_MODES, directions_of
from iogate.spec.variables import expand_tree
from iogate.units import format_duration_exact, format_size_exact

# -- the result ---------------------------------------------------------------------------


@dataclass
class Entry:
    """One key of a workload: its value, the option it came from, a comment on it."""

    value: Any  # int, bool, str, list of str, or a {read, write} mapping
    src: Option | None  # None: made up for fio's default
    comment: str = ""


@dataclass
class Workload:
    """One fio job as an iogate workload; ``group``, ``stonewall``, ``wait_for``,
    ``new_group``, ``exitall`` and ``exit_what`` are for :mod:`iogate.fio.groups`."""

    section: Section
    fio_name: str
    name: str = ""
    keys: dict[str, Entry] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # about the job as a whole
    group: str | None = None
    stonewall: bool = False
    wait_for: Option | None = None
    new_group: bool = False  # fio starts a reporting group here
    exitall: Option | None = None
    exit_what: Option | None = None
    clone: int | None = None  # fio's clone number, when each clone is a workload of its own
    # verify across jobs (see link_readbacks): the verify of a do_verify=0 job, with the note
    # to give when no later job reads its blocks back; the verify of a job that only reads.
    verify_later: Entry | None = None
    verify_later_note: str = ""
    verify_reads: Entry | None = None


# -- what every option group shares -------------------------------------------------------

_KEYWORD = re.compile(r"\$(?:" + "|".join(KEYWORDS) + r")")
_BC_MATH = re.compile(r"[-+*/]")


def bc_computes(text: str) -> bool:
    """Whether fio hands the value to bc when it reads the file: one of its keywords
    (``$mb_memory``...) with arithmetic around it."""
    return bool(_KEYWORD.search(text) and _BC_MATH.search(text))


def bc_integer(text: str) -> int | None:
    """``text`` as bc computes it at its default scale (integers, ``/`` cut toward zero),
    or None when it is anything but numbers, ``+ - * /`` and parentheses."""
    import ast

    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def value(node: ast.AST) -> int | None:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            v = value(node.operand)
            return None if v is None else (v if isinstance(node.op, ast.UAdd) else -v)
        if isinstance(node, ast.BinOp):
            a, b = value(node.left), value(node.right)
            if a is None or b is None:
                return None
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b if abs(a * b) < 1 << 64 else None
            if isinstance(node.op, ast.Div) and b:
                q = abs(a) // abs(b)
                return q if (a < 0) == (b < 0) else -q
        return None

    return value(tree)


# A value that is one reference and nothing else: ${VAR}, or one of fio's keywords.
LONE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$(?:" + "|".join(KEYWORDS) + r")")


def flag(src: Option) -> bool:
    """fio's boolean: a bare flag is set (for the options that take one); else 0 or 1."""
    if src.value is None:
        if src.key not in BARE_FLAGS:
            raise ValueProblem(f"fio needs a value: {src.key}=1 or {src.key}=0")
        return True
    try:
        n = fio_size(src.value)
    except ValueProblem:
        raise ValueProblem(f"fio takes 0 or 1 for {src.key}, not '{shown(src.value)}'") \
            from None
    if n > 1:
        raise ValueProblem(f"fio takes 0 or 1 for {src.key}, not {src.value}")
    return n == 1


def default_value(src: Option) -> str:
    """An option's value as fio's defaults are looked up by (a bare flag is 1)."""
    if src.value is None:
        return "1"
    return src.value.strip()


class JobState:
    """The conversion of one fio job (its global options merged) to workload keys: its
    state, and the helpers every option group's handlers use to read an option, put a
    key, note or refuse."""

    def __init__(self, problems: Problems, workload: Workload,
                 options: dict[str, Option], env: Mapping[str, str] | None,
                 given: Mapping[str, Any] | None = None) -> None:
        self.problems = problems
        self.env = env  # the environment the suite is loaded with; None: os.environ
        # the workload keys the command line sets over every workload (--set): what the
        # job lacks and one of them gives is there when it runs, as with fio's own options
        # given on its command line
        self.given: Mapping[str, Any] = given or {}
        self.literals: dict[str, Option | None] = {}  # get_literal's answers
        self.w = workload
        self.opts = options
        self.used: set[str] = set()
        self.kb_base = 1024
        self.rw: str | None = "read"  # None: set by a variable, unknown until run time
        self.engine = FIO_DEFAULT_ENGINE  # "": set by a variable, unknown until run time
        self.files = 1
        self.numjobs: int | str = 1
        # fio's clones each with their own files (directory without filename): the files of
        # each clone, one workload per clone; empty when the clones share the job's files.
        self.clones: list[dict[str, Entry]] = []  # the keys each fio clone has of its own
        self.offset: int | str | None = 0  # in bytes, or an expression; None: a share
        self.size_per_file = False  # fio's nrfiles files: size/nrfiles each
        self.entries_per_file = 1  # fio's files of the job that are one file (see _files)
        self.runtime_ns: int | None = None  # when known in the file

    # helpers
    def get(self, name: str) -> Option | None:
        self.used.add(name)
        return self.opts.get(name)

    def get_literal(self, name: str) -> Option | None:
        """The option, its environment variables expanded where its value must be a literal
        here (a flag, a mode, a count iogate multiplies by), as fio expands them when it
        reads the file: the value is taken from the environment the file is read in, and a
        comment says so. None when it is not given, or refused as a variable is not set."""
        src = self.get(name)
        if src is None or src.value is None or not has_reference(src.value):
            return src
        if name in self.literals:  # read once: one comment, one refusal
            return self.literals[name]
        self.literals[name] = None
        value, unset = expand_tree(suite_text(src.value.strip()), "", self.env)
        if unset:
            self.refuse(src, f"fio reads {src.key} from the environment when it reads the "
                        f"file: {unset[0].message.split(';')[0]}: set it, or write the value "
                        "in the file")
            return None
        value = str(value)
        if bc_computes(src.value) and _BC_MATH.search(value):
            # fio hands a value holding one of its keywords to bc when it has + - * /:
            # integer arithmetic, a quotient cut toward zero
            if (n := bc_integer(value)) is None:
                self.refuse(src, f"fio has bc compute {src.key}={value}, which is not integer "
                            "arithmetic iogate can follow: compute the value")
                return None
            value = str(n)
        self.note(src, f"fio reads the variable{'s' if src.value.count('$') > 1 else ''} when "
                  f"it reads the file: {src.key}={value} here, as the environment says now")
        self.literals[name] = replace(src, value=value)
        return self.literals[name]

    def put(self, key: str, value: Any, src: Option | None, comment: str = "") -> None:
        self.w.keys[key] = Entry(value, src, comment)

    def note(self, src: Option, text: str) -> None:
        self.w.notes.append(f"{src} ({src.where}): {text}")

    def refuse(self, src: Option, message: str) -> None:
        self.problems.option(src, message)

    def value(self, src: Option) -> str | None:
        if src.value is None or not src.value.strip():
            self.refuse(src, f"{src.key} needs a value")
            return None
        return src.value.strip()

    def number(self, src: Option, text: str, kind: str) -> int | str:
        """A literal as an exact number of base units (bytes, a count, nanoseconds), or a
        suite expression for a value with references or fio's parenthesised arithmetic."""
        if "$" in text or "(" in text:
            if LONE_REF.fullmatch(text):
                return suite_text(text)

            def literal(t: str) -> str:
                if kind == "time_s" or kind == "time_us":
                    return str(fio_time(t, 1) // 1000)  # microseconds, fio's unit here
                return str(fio_size(t, self.kb_base))

            expr = fio_expression(text, literal)
            if kind.startswith("time"):
                expr = f"{expr} * 1us" if LONE_REF.fullmatch(expr) or re.fullmatch(
                    r"\([^()]*\)", expr) else f"({expr}) * 1us"
            if "$" in expr:
                return expr
            # No reference: the value is known now, and reads better as a number.
            expr_kind = DURATION if kind.startswith("time") else SIZE if kind == "size" \
                else COUNT
            try:
                return evaluate_int(expr, kind=expr_kind)
            except ExprError as exc:
                raise ValueProblem(f"'{shown(text)}': {exc}") from None
        if kind == "time_s":
            return fio_time(text, 1_000_000)
        if kind == "time_us":
            return fio_time(text, 1)
        return fio_size(text, self.kb_base)

    def checked(self, src: Option, text: str, kind: str) -> int | str | None:
        """:meth:`number`, or None once the problem is reported at the option."""
        try:
            return self.number(src, text, kind)
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return None

    def bool_key(self, name: str, key: str | None = None) -> None:
        src = self.get_literal(name)
        if src is None:
            return
        try:
            self.put(key or name, flag(src), src)
        except ValueProblem as exc:
            self.refuse(src, str(exc))

    def size_text(self, n: int | str) -> int | str:
        return format_size_exact(n) if isinstance(n, int) and n else n

    def int_key(self, name: str, *, zero_means_off: str = "") -> int | str | None:
        """An integer option, put under its own name; None when not given or refused."""
        src = self.get(name)
        if src is None:
            return None
        text = self.value(src)
        if text is None:
            return None
        if (n := self.checked(src, text, "count")) is None:
            return None
        if n == 0 and zero_means_off:
            self.note(src, zero_means_off)
            return None
        self.put(name, n, src)
        return n

    def plain_keys(self) -> None:
        """Every plain key (iogate.spec.keys.PLAIN) from its fio option, in its unit, unless
        an option group took that option already; one whose needed key is not set is noted
        and left out, as fio ignores it."""
        for key, row in PLAIN.items():
            if row.fio in self.used or (src := self.get(row.fio)) is None:
                continue
            if row.needs and row.needs not in self.w.keys:
                self.note(src, f"no {row.needs}: fio ignores it")
                continue
            if row.fio_unit == "bool":
                self.bool_key(row.fio, key)
                continue
            if (text := self.value(src)) is None:
                continue
            kind = {"us": "time_us", "size": "size"}.get(row.fio_unit, "count")
            if (n := self.checked(src, text, kind)) is None:
                continue
            if row.fio_unit == "us" and isinstance(n, int):
                self.put(key, format_duration_exact(n), src)
            else:
                self.put(key, self.size_text(n) if row.fio_unit == "size" else n, src)

    def dirs(self) -> tuple[str, ...] | None:
        """The directions the job issues requests in (read, write, trim); None when rw is
        a variable."""
        return None if self.rw is None else directions_of(self.rw)

    def trims(self) -> bool:
        """Whether the job trims: its per-direction values are then read and trim."""
        return self.rw in TRIM_MODES

    def writes(self) -> bool:
        d = self.dirs()
        return d is None or "write" in d

    def never_writes(self) -> str | None:
        """Why the job never writes (the words for a note), or None when it may: rw from a
        variable counts with the variable's value in this environment, as the suite will
        be loaded with it (a template shares its options between read and write runs)."""
        if self.rw is not None:
            return None if self.writes() else "this job never writes"
        src = self.opts["rw"]
        text = suite_text((src.value or "").strip())
        value, unset = expand_tree(text, "", self.env)
        mode = str(value).strip()
        if unset or mode not in ("read", "randread"):
            return None
        return f"rw={src.value} is {mode} here, which never writes"
