"""One fio job to one iogate workload: the job's options, its global ones merged in, as
workload keys with comments where iogate spells fio's meaning differently, notes on what
has no effect, and a problem for each option that cannot be kept. (A job under
``directory`` whose clones fio gives files of their own, ``JOB.N.F``, is one workload per
clone: iogate's threads share their workload's files.)

Sizes and counts are fio's (``4k`` is 4096, ``4KiB`` is 4000 with the default ``kb_base``,
``rate_iops=20k`` is 20480) and are written exactly; ``rate`` and ``rate_iops`` are per fio
clone and per direction, so the workload spells out the mapping and multiplies by
``numjobs``; a synchronous engine (one the engine catalog says keeps one request in flight)
ignores ``iodepth``; options fio ignores for the job's ``rw`` are left out with a note
(for ``rw`` from a variable, with its value in the environment the suite is loaded with);
``${VAR}`` stays a reference, read from the environment when the suite runs.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import TypeAdapter, ValidationError

from iogate.engine import catalog
from iogate.expr import COUNT, DURATION, SIZE, ExprError, evaluate_int, shown
from iogate.fio.jobfile import (
    BARE_FLAGS,
    KEYWORDS,
    Option,
    Section,
    ValueProblem,
    directions,
    filename_list,
    fio_expression,
    fio_size,
    fio_time,
    has_reference,
    suite_text,
)
from iogate.fio.problems import Problems
from iogate.fio.vocabulary import (
    ALIASES,
    AS_IOGATE_DOES,
    AT_DEFAULT,
    ENGINE_OPTIONS,
    FIO_DEFAULT_ENGINE,
    FIO_OPTIONS,
    HINTS,
    MODES,
    OUTPUT_ONLY,
    SAME_MEANING,
    VERIFY_WAY,
    engine_for,
)
from iogate.spec.fields import DEFAULT_BS, FILES_MAX, NAME_MAX, RandomDistribution
from iogate.spec.modes import MIXED, TRIM_MODES, directions_of, field_directions_of
from iogate.spec.variables import expand_tree
from iogate.units import format_duration_exact, format_size_exact

__all__ = ["NAME_BAD", "Entry", "Workload", "effective", "suite_name", "workload"]

# -- the result ---------------------------------------------------------------------------


@dataclass
class Entry:
    """One key of a workload: its value, the option it came from, a comment on it."""

    value: Any  # int, bool, str, list of str, or a {read, write} mapping
    src: Option | None  # None: made up for fio's default
    comment: str = ""


@dataclass
class Workload:
    """One fio job as an iogate workload; ``group``, ``stonewall`` and ``wait_for`` are for
    :mod:`iogate.fio.groups`."""

    section: Section
    fio_name: str
    name: str = ""
    keys: dict[str, Entry] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # about the job as a whole
    group: str | None = None
    stonewall: bool = False
    wait_for: Option | None = None
    clone: int | None = None  # fio's clone number, when each clone is a workload of its own


# -- one job ------------------------------------------------------------------------------

_CLONES_MAX = 256  # workloads one job under directory may become, one per fio clone

_LONE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$(?:" + "|".join(KEYWORDS) + r")")
# A drive letter (F:...) or a device namespace path (\\.\PhysicalDrive0, \\?\...).
_WINDOWS_PATH = re.compile(r"[A-Za-z]:|\\\\[.?]\\")


def _flag(src: Option) -> bool:
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


class _Job:
    """The conversion of one fio job (its global options merged) to workload keys."""

    def __init__(self, problems: Problems, workload: Workload,
                 options: dict[str, Option], env: Mapping[str, str] | None) -> None:
        self.problems = problems
        self.env = env  # the environment the suite is loaded with; None: os.environ
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
        self.clone_files: list[list[str]] = []
        self.size_per_file = False  # fio's nrfiles files: size/nrfiles each

    # helpers
    def get(self, name: str) -> Option | None:
        self.used.add(name)
        return self.opts.get(name)

    def put(self, key: str, value: Any, src: Option | None, comment: str = "") -> None:
        self.w.keys[key] = Entry(value, src, comment)

    def note(self, src: Option, text: str) -> None:
        self.w.notes.append(f"{src} (line {src.line}): {text}")

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
            if _LONE_REF.fullmatch(text):
                return suite_text(text)

            def literal(t: str) -> str:
                if kind == "time_s" or kind == "time_us":
                    return str(fio_time(t, 1) // 1000)  # microseconds, fio's unit here
                return str(fio_size(t, self.kb_base))

            expr = fio_expression(text, literal)
            if kind.startswith("time"):
                expr = f"{expr} * 1us" if _LONE_REF.fullmatch(expr) or re.fullmatch(
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

    def bool_key(self, name: str, key: str | None = None) -> None:
        src = self.get(name)
        if src is None:
            return
        if src.value is not None and has_reference(src.value):
            self.refuse(src, "fio reads 0 or 1 from the variable, iogate true or false: set "
                        "the value in the file")
            return
        try:
            self.put(key or name, _flag(src), src)
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
        try:
            n = self.number(src, text, "count")
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return None
        if n == 0 and zero_means_off:
            self.note(src, zero_means_off)
            return None
        self.put(name, n, src)
        return n

    # the conversion, in an order where each step knows what it depends on
    def convert(self) -> None:
        self._kb_base()
        self._rw()
        self._engine()
        self._numjobs()
        self._files()
        self._sizes()
        self._block_sizes()
        self._iodepth()
        self._times()
        self._direct()
        self._mix()
        self._rates()
        self._randomness()
        self._thinktime()
        self._syncs()
        self.bool_key("invalidate")
        self._data()
        self._verify()
        self._loose_ends()

    def _kb_base(self) -> None:
        src = self.get("kb_base")
        if src is None:
            return
        if src.value not in ("1024", "1000"):
            self.refuse(src, "kb_base is 1024 or 1000")
            return
        self.kb_base = int(src.value)
        self.note(src, "sizes below are read with it and written in iogate's units "
                  "(k = KiB = 1024)")

    def _rw(self) -> None:
        src = self.get("rw")
        if src is None:
            self.put("rw", "read", None, "fio's default rw")
            return
        text = self.value(src)
        if text is None:
            return
        if has_reference(text):
            self.rw = None
            self.put("rw", suite_text(text), src)
            return
        mode, colon, _ = text.partition(":")
        if mode not in MODES:
            close = difflib.get_close_matches(mode, MODES, 1)
            self.refuse(src, f"unknown rw '{shown(mode)}'" + (
                f"; did you mean '{close[0]}'?" if close else
                f"; iogate runs {', '.join(MODES)}"))
        elif colon:
            self.refuse(src, f"'{shown(text)}': iogate has no ':N' offset modifier; write "
                        f"rw={mode}")
        else:
            self.rw = "rw" if mode == "readwrite" else mode
            self.put("rw", self.rw, src)

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

    def _engine(self) -> None:
        src = self.get("ioengine")
        if src is None:
            self.put("ioengine", FIO_DEFAULT_ENGINE, None,
                     "fio's default ioengine; iogate's is io_uring")
            return
        text = self.value(src)
        if text is None:
            return
        if has_reference(text):
            self.engine = ""
            self.put("ioengine", suite_text(text), src)
            return
        try:
            self.engine, comment = engine_for(text)
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        self.put("ioengine", self.engine, src, comment)

    def _numjobs(self) -> None:
        n = self.int_key("numjobs")
        if n is None:
            return
        if n != 1 and "directory" in self.opts and "filename" not in self.opts:
            # fio names each clone's files after it (JOB.N.F); iogate's threads share the
            # files of their workload, so each clone becomes a workload (see _files).
            src = self.w.keys.pop("numjobs").src
            assert src is not None
            if not isinstance(n, int):
                self.refuse(src, "under directory, fio gives each clone its own file "
                            f"({self.w.fio_name}.N.0); iogate's threads share their "
                            "workload's files, so the import makes a workload per clone and "
                            "needs their number: write numjobs as a number")
                return
            if n > _CLONES_MAX:
                self.refuse(src, f"numjobs={n} under directory would be {n} workloads, one "
                            f"per clone; the import makes at most {_CLONES_MAX}")
                return
            self.clone_files = [[] for _ in range(n)]
            self.note(src, f"fio gives each of its {n} clones its own files in the directory; "
                      "iogate's threads would share one workload's files, so each clone is a "
                      "workload of its own, one thread, all run together (fio reports each "
                      "clone on its own too, unless group_reporting)")
            return
        self.numjobs = n

    def _files(self) -> None:
        src = self.get("filename")
        directory = self.get("directory")
        nrfiles = self.get("nrfiles")
        names: list[str] = []
        if src is not None:
            text = self.value(src)
            if text is None:
                return
            for name in filename_list(text):
                if not name:
                    self.refuse(src, "an empty file name (two ':' in a row, or one at an "
                                "end); escape a ':' in a name as '\\:'")
                    return
                if name == "-":
                    self.refuse(src, "'-' is fio's stdin or stdout; iogate needs a file or "
                                "a device")
                    return
                if _WINDOWS_PATH.match(name):
                    escaped = name.replace(":", "\\:")
                    self.refuse(src, f"'{shown(name)}' is a Windows path; on Linux name a "
                                "file or a device such as /dev/sdb (for a file of that name "
                                f"in the working directory, write ./{shown(escaped)})")
                    return
                names.append(name)
        count = 1
        if nrfiles is not None:
            try:
                count = fio_size(nrfiles.value or "")
            except ValueProblem as exc:
                self.refuse(nrfiles, str(exc))
            if src is None and (count == 0 or count > FILES_MAX):
                self.refuse(nrfiles, f"nrfiles={count}: iogate's workload has 1 to "
                            f"{FILES_MAX} files")
                count = 1
        if directory is not None:
            dtext = self.value(directory)
            if dtext is None:
                return
            if ":" in dtext.replace("\\:", ""):
                self.refuse(directory, "several directories: iogate takes one; name the "
                            "files in filename")
                return
            dtext = dtext.replace("\\:", ":").rstrip("/")
            if names:
                names = [dtext + "/" + n for n in names]
                self.note(directory, "joined to the file names")
            else:
                # fio's default filename_format, $jobname.$jobnum.$filenum.
                def files_of(clone: int) -> list[str]:
                    return [f"{dtext}/{self.w.fio_name}.{clone}.{f}" for f in range(count)]
                names = files_of(0)
                self.size_per_file = count > 1
                if nrfiles is not None:
                    self.note(nrfiles, f"fio's {count} {'files' if count > 1 else 'file'} of "
                              "the job, named in filename")
                for k in range(len(self.clone_files)):
                    self.clone_files[k] = files_of(k)
                num = "N" if self.clone_files else "0"
                first, last = (f"{self.w.fio_name}.{num}.{f}" for f in (0, count - 1))
                self.note(directory, f"fio's file {'names' if count > 1 else 'name'} for the "
                          f"job, {first}" + (f" to {last}" if count > 1 else "")
                          + (" for its clone N" if self.clone_files else "")
                          + " ($jobname.$jobnum.$filenum), in that directory")
        if nrfiles is not None and count != 1:
            if src is not None:
                self.note(nrfiles, "fio ignores nrfiles when filename is given")
            elif directory is None:
                self.refuse(nrfiles, f"fio's nrfiles={count} makes {count} files named after "
                            "the job; iogate needs them named: filename=a:b:c")
        if not names:
            self.w.notes.append("no filename: fio makes a file per job and clone in the "
                                "working directory (JOB.0.0); iogate a temporary one per "
                                "workload, shared by its threads, in $IOGATE_TMPDIR (else "
                                "/var/tmp), removed afterwards")
            return
        assert src is not None or directory is not None
        where = src if src is not None else directory
        assert where is not None
        self.files = len(names)
        values = [suite_text(n) for n in names]
        comment = ""
        if any(has_reference(n) for n in names):
            comment = "fio splits a variable's value at ':' into several files; iogate reads " \
                      "it as one name"
        self.put("filename", values[0] if len(values) == 1 else values, where, comment)

    def _sizes(self) -> None:
        size = self.get("size")
        filesize = self.get("filesize")
        offset = self.get("offset")
        size_value: int | str | None = None
        if size is not None and (text := self.value(size)) is not None:
            try:
                size_value = self.number(size, text, "size")
            except ValueProblem as exc:
                self.refuse(size, str(exc))
                return
        if filesize is not None and (text := self.value(filesize)) is not None:
            if re.search(r"\d\s*[-:]\s*\d", text) and "(" not in text:
                self.refuse(filesize, "a range of file sizes: iogate's files of a job are "
                            "all one size")
                return
            try:
                per_file = self.number(filesize, text, "size")
            except ValueProblem as exc:
                self.refuse(filesize, str(exc))
                return
            total: int | str = per_file * self.files if isinstance(per_file, int) else (
                per_file if self.files == 1 else f"{self.files} * ({per_file})")
            comments = [] if self.files == 1 else [
                f"fio's filesize is per file; iogate's size is the total over the "
                f"{self.files} files"]
            if size is not None and size_value != total:
                # fio's size is then the amount to move over files of filesize; going on
                # until the runtime, it only bounds nothing.
                time_based = self.opts.get("time_based")
                if time_based is None or time_based.value not in (None, "1"):
                    self.refuse(filesize, "size and filesize both given: fio then lays out "
                                "files of filesize and moves size bytes; iogate's size is "
                                "both, the region of all its files together: give one")
                    return
                comments.append(f"size={size.value} (line {size.line}) is the amount fio "
                                "moves; time_based runs past it")
            self.put("size", self.size_text(total), filesize, "; ".join(comments))
        elif size_value is not None and self.size_per_file:
            per_file = f"size/{self.files}"
            if isinstance(size_value, int):
                per_file = format_size_exact(size_value // self.files)
                size_value = size_value // self.files * self.files
            self.put("size", self.size_text(size_value), size, f"fio makes each of the "
                     f"{self.files} files {per_file}; iogate's size is the total over them, "
                     "split equally")
        elif size_value is not None:
            self.put("size", self.size_text(size_value), size)
        elif size is None and self.get("filename") is None:
            self.problems.add(self.w.section.line, f"[{self.w.section.name}]",
                              "no size (or filesize) and no filename: fio needs one, to know "
                              "how much to lay out or which file to use whole: add size= to "
                              "the job or to [global]")
        elif size is None:
            self.w.notes.append("no size: the whole file or device, from offset to its end, "
                                "as fio")
        if offset is not None and (text := self.value(offset)) is not None:
            try:
                n = self.number(offset, text, "size")
            except ValueProblem as exc:
                self.refuse(offset, str(exc))
                return
            self.put("offset", self.size_text(n) if n else 0, offset)

    def _block_sizes(self) -> None:
        given = [(name, src) for name in ("bs", "bsrange", "bssplit")
                 if (src := self.get(name)) is not None]
        align = self.get("blockalign")
        if align is not None and (text := self.value(align)) is not None:
            self._per_direction("blockalign", align, text, 0)
        if not given:
            return
        # fio: bs and bsrange set the same sizes (the last one read wins); bssplit, when
        # set, is used instead of them for its directions.
        split = next((src for name, src in given if name == "bssplit"), None)
        sizes = max((src for name, src in given if name != "bssplit"),
                    key=lambda s: (s.section != "global", s.line), default=None)
        for _, src in given:
            if src is not split and src is not sizes:
                self.note(src, f"fio uses {sizes.key if sizes else 'bssplit'} (line "
                          f"{(sizes or split).line}) instead")  # type: ignore[union-attr]
        if split is not None and sizes is not None:
            self.note(sizes, "fio uses bssplit; this gives the size of a direction bssplit "
                      "leaves empty")
        if split is not None and any(has_reference(s.value or "") for _, s in given):
            self.refuse(split, "bssplit with a variable, or with bs or bsrange from a "
                        "variable: write the values out")
            return
        if split is None:
            assert sizes is not None
            text = self.value(sizes)
            if text is None:
                return
            if sizes.key in ("bs", "blocksize"):
                self._per_direction("bs", sizes, text, DEFAULT_BS)
            else:
                self._bsrange(sizes, text)
            return
        self._bssplit(split, sizes)

    def _per_direction(self, key: str, src: Option, text: str, default: int) -> None:
        if has_reference(text) and "," not in text:
            self.put(key, suite_text(text), src)
            return
        try:
            parts = directions(text, "sizes", trims=self.trims())
            values = [self.number(src, p, "size") if p else default for p in parts]
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        shown_values = [self.size_text(v) for v in values]
        if shown_values[0] == shown_values[1]:
            self.put(key, shown_values[0], src)
        else:
            self.put(key, {"read": shown_values[0], "write": shown_values[1]}, src)

    def _range(self, src: Option, text: str) -> tuple[int, int, str] | None:
        """One direction of bsrange: (lo, hi, comment) as fio issues it."""
        lo_text, sep, hi_text = text.replace(":", "-").partition("-")
        if not sep:
            lo_text = hi_text = text
        lo, hi = fio_size(lo_text, self.kb_base), fio_size(hi_text, self.kb_base)
        if lo == 0 or hi == 0:
            raise ValueProblem("a block size of 0")
        if lo > hi:
            lo, hi = hi, lo  # fio swaps them
        comment = ""
        if lo & (lo - 1):
            if lo != hi:
                raise ValueProblem(f"'{shown(text)}': with a minimum that is not a power of "
                                   "two fio issues any size in between; iogate's sizes are "
                                   "multiples of the minimum")
        elif hi % lo:
            comment = f"fio issues multiples of {format_size_exact(lo)} up to " \
                      f"{format_size_exact(hi - hi % lo)}"
            hi -= hi % lo
        return lo, hi, comment

    def _bsrange(self, src: Option, text: str) -> None:
        if has_reference(text):
            self.put("bsrange", suite_text(text), src)
            return
        try:
            parts = directions(text, "ranges", ",/", trims=self.trims())
            ranges = [self._range(src, p) if p else (DEFAULT_BS, DEFAULT_BS, "")
                      for p in parts]
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        texts = [f"{format_size_exact(r[0])}-{format_size_exact(r[1])}" for r in ranges
                 if r is not None]
        comment = "; ".join(dict.fromkeys(r[2] for r in ranges if r is not None and r[2]))
        if ranges[0] == ranges[1] and ranges[0] is not None and ranges[0][0] == ranges[0][1]:
            self.put("bs", format_size_exact(ranges[0][0]), src, comment)
        elif texts[0] == texts[1]:
            self.put("bsrange", texts[0], src, comment)
        else:
            self.put("bsrange", {"read": texts[0], "write": texts[1]}, src, comment)

    def _bssplit(self, split: Option, sizes: Option | None) -> None:
        text = self.value(split)
        if text is None:
            return
        try:
            parts = directions(text, "splits", trims=self.trims())
            fallback = None
            if sizes is not None and sizes.value:
                fallback = directions(sizes.value, "sizes", "," if sizes.key in (
                    "bs", "blocksize") else ",/", trims=self.trims())
            out: list[str] = []
            for i, part in enumerate(parts):
                if part:
                    entries = []
                    for entry in part.split(":"):
                        bs_text, slash, pct = entry.partition("/")
                        bs = format_size_exact(fio_size(bs_text, self.kb_base))
                        entries.append(f"{bs}/{pct.strip()}" if slash and pct.strip() else bs)
                    out.append(":".join(entries))
                    continue
                # An empty direction uses the job's bs (or bsrange) for that direction.
                other = fallback[i] if fallback and fallback[i] else ""
                if not other:
                    out.append(f"{format_size_exact(DEFAULT_BS)}/100")
                    continue
                r = self._range(split, other)
                if r is None or r[0] != r[1]:
                    raise ValueProblem("bssplit leaves a direction to a bsrange; iogate "
                                       "cannot mix a split and a range: give both "
                                       "directions in bssplit")
                out.append(f"{format_size_exact(r[0])}/100")
        except ValueProblem as exc:
            self.refuse(split, str(exc))
            return
        self.put("bssplit", out[0] if out[0] == out[1] else {"read": out[0], "write": out[1]},
                 split)

    def _iodepth(self) -> None:
        src = self.get("iodepth")
        if src is None:
            return
        ioengine = catalog.get(self.engine)
        if ioengine is not None and not ioengine.queued:
            if src.value not in ("1", None):
                self.note(src, f"fio's {self.engine} is synchronous: one request in flight "
                          "whatever iodepth says, so iogate's iodepth stays 1")
                return
        self.int_key("iodepth")

    def _times(self) -> None:
        for name in ("runtime", "ramp_time"):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            try:
                n = self.number(src, text, "time_s")
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                continue
            if n == 0:
                self.note(src, "0 is fio's default: no limit" if name == "runtime" else
                          "0 is fio's default: none")
                continue
            self.put(name, format_duration_exact(n) if isinstance(n, int) else n, src)
        time_based = self.opts.get("time_based")
        if time_based is not None and "runtime" not in self.w.keys:
            self.used.add("time_based")
            self.note(time_based, "no runtime: fio ignores it")
        else:
            self.bool_key("time_based")

    def _direct(self) -> None:
        direct, buffered = self.get("direct"), self.get("buffered")
        last = max((s for s in (direct, buffered) if s is not None),
                   key=lambda s: (s.section != "global", s.line), default=None)
        if last is None:
            return
        if last is buffered:
            if direct is not None:
                self.note(direct, "fio uses buffered, read later")
            try:
                self.put("direct", not _flag(buffered), buffered, "fio's buffered=0 is "
                         "direct I/O" if not _flag(buffered) else "")
            except ValueProblem as exc:
                self.refuse(buffered, str(exc))
            return
        if buffered is not None:
            self.note(buffered, "fio uses direct, read later")
        self.bool_key("direct")

    def _mix(self) -> None:
        srcs = [s for s in (self.get("rwmixread"), self.get("rwmixwrite")) if s is not None]
        if not srcs:
            return
        # fio sets both from either; the last one read wins.
        src = max(srcs, key=lambda s: (s.section != "global", s.line))
        for other in srcs:
            if other is not src:
                self.note(other, f"fio uses {src} (line {src.line}), read later")
        if self.rw is not None and self.rw not in MIXED:
            self.note(src, f"fio ignores it for rw={self.rw}")
            return
        text = self.value(src)
        if text is None:
            return
        try:
            n = self.number(src, text, "count")
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        if isinstance(n, int) and n > 100:
            self.refuse(src, f"{src.key} is a percentage, at most 100")
            return
        if src.key == "rwmixwrite":
            self.put("rwmixread", 100 - n if isinstance(n, int) else f"100 - ({n})", src,
                     f"fio's rwmixwrite={text}")
        else:
            self.put("rwmixread", n, src)

    def _rates(self) -> None:
        for name, kind in (("rate", "size"), ("rate_iops", "count")):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            self._rate(name, kind, src, text)
        src = self.get("rate_process")
        if src is not None and (text := self.value(src)) is not None:
            if text not in ("linear", "poisson"):
                self.refuse(src, "rate_process is linear or poisson")
            elif "rate" in self.w.keys or "rate_iops" in self.w.keys:
                self.put("rate_process", text, src)
            else:
                self.note(src, "no rate is set: fio ignores it")

    def _rate(self, name: str, kind: str, src: Option, text: str) -> None:
        if self.rw is None:
            self.refuse(src, f"{name} with rw from a variable: fio's rate is per direction, "
                        "iogate's single rate is split by the mix; set rw in the file")
            return
        if self.rw in TRIM_MODES and len(directions_of(self.rw)) == 2:
            self.refuse(src, f"{name} with rw={self.rw}: iogate does not limit the rate of "
                        "trim and write pairs; limit a trim or a write job instead")
            return
        dirs = field_directions_of(self.rw)  # a trim's rate is the write value
        try:
            parts = directions(text, "rates", trims=self.trims())
            values: dict[str, int | str] = {}
            for d, part in zip(("read", "write"), parts, strict=True):
                part = part.removesuffix("/s") if kind == "size" else part
                if d in dirs and part:
                    v = self.number(src, part, kind)
                    if v != 0:
                        values[d] = v
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        if not values:
            self.note(src, "no limit for the directions this job issues")
            return
        if len(dirs) == 2 and len(values) == 1:
            only = next(iter(values))
            self.refuse(src, f"fio limits only the {only}s of this mixed job; iogate limits "
                        "both directions of a mixed workload or neither: give both")
            return
        notes = []
        if self.numjobs != 1:
            notes.append(f"fio's {name} is per clone: times numjobs={self.numjobs}")
            for d, v in values.items():
                if isinstance(v, int) and isinstance(self.numjobs, int):
                    values[d] = v * self.numjobs
                else:
                    values[d] = f"{_operand(v)} * {_operand(self.numjobs)}"
        shown_values = {d: (format_size_exact(v) + "/s" if kind == "size" and isinstance(v, int)
                            else v) for d, v in values.items()}
        if len(values) == 2:
            if "," not in text:
                notes.insert(0, f"fio's {name}={text} limits each direction; iogate's single "
                                "value would be the total")
            self.put(name, shown_values, src, "; ".join(notes))
        else:
            self.put(name, next(iter(shown_values.values())), src, "; ".join(notes))

    def _randomness(self) -> None:
        random_rw = self.rw is None or self.rw.startswith("rand")
        src = self.get("random_distribution")
        if src is not None and (text := self.value(src)) is not None:
            if "," in text:
                self.refuse(src, "a distribution per direction: iogate takes one for the job")
            elif text.startswith("zoned_abs"):
                self.refuse(src, "zoned_abs is not supported; zoned takes percentages of the "
                            "region")
            elif re.fullmatch(r"(zipf|pareto|normal):[^:]+:.+", text):
                self.refuse(src, "a distribution with a centre: iogate's have none")
            elif text.partition(":")[0] not in ("random", "zipf", "pareto", "normal", "zoned"):
                self.refuse(src, f"unknown random_distribution '{shown(text)}': fio takes "
                            "random, zipf:THETA, pareto:H, normal:SIGMA or zoned:...")
            elif not random_rw and text != "random":
                self.note(src, f"fio ignores it for rw={self.rw}")
            elif re.search(r"/\s*(:|$)", text) and text.startswith("zoned:"):
                self._open_zone(src, text)
            else:
                self.put("random_distribution", text, src)
        randseed = self.get("randseed")
        if randseed is not None and (text := self.value(randseed)) is not None:
            try:
                self.put("randseed", self.number(randseed, text, "count"), randseed)
            except ValueProblem as exc:
                self.refuse(randseed, str(exc))
        if randseed is not None and "randrepeat" in self.opts:
            self.note(self.opts["randrepeat"], "randseed sets the seed; fio ignores "
                      "randrepeat then")
            self.used.add("randrepeat")
        else:
            self.bool_key("randrepeat")
        norandommap = self.get("norandommap")
        if norandommap is not None:
            self.note(norandommap, "iogate's random offsets never use a random map")
        elif random_rw and self.rw is not None:
            self.w.notes.append("fio touches each block once per pass (its random map); "
                                "iogate draws offsets independently, like fio's norandommap")
            if "bssplit" in self.w.keys or "bsrange" in self.w.keys:
                self.w.notes.append(
                    "with several block sizes fio's random map also shortens requests to the "
                    "untouched blocks left at an offset, so fio issues smaller requests and "
                    "more of them than the split says (one bssplit job measured a mean read "
                    "of 4835 bytes with the map, 11528 with norandommap and in iogate): "
                    "sizes, IOPS and the number of requests differ; add norandommap to the "
                    "fio job to compare them")

    def _open_zone(self, src: Option, text: str) -> None:
        """fio's zone without a size (``zoned:50/5:30/15:20/``) takes the rest of the region:
        written out, as the suite's own parser reads it."""
        try:
            dist = _DISTRIBUTION.validate_python(text)
        except ValidationError:
            self.put("random_distribution", text, src)  # the loader says what is wrong
            return
        self.put("random_distribution", str(dist), src, "fio gives the zone without a size "
                 "the rest of the region")

    def _thinktime(self) -> None:
        src = self.get("thinktime")
        blocks = self.get("thinktime_blocks")
        set_ = False
        if src is not None and (text := self.value(src)) is not None:
            try:
                n = self.number(src, text, "time_us")
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                return
            if n == 0:
                self.note(src, "0 is fio's default: none")
            else:
                comment = "a bare number in the variable is microseconds to fio, seconds " \
                          "to iogate" if _LONE_REF.fullmatch(text) else ""
                self.put("thinktime", format_duration_exact(n) if isinstance(n, int) else n,
                         src, comment)
                set_ = True
        if blocks is not None:
            if set_:
                self.int_key("thinktime_blocks")
            else:
                self.note(blocks, "no thinktime: fio ignores it")

    def _syncs(self) -> None:
        for name in ("fsync", "fdatasync"):
            src = self.opts.get(name)
            if src is None:
                self.used.add(name)
                continue
            if (why := self.never_writes()) is not None:
                self.used.add(name)
                self.note(src, f"{why}: fio never syncs")
            elif (ioengine := catalog.get(self.engine)) is not None and not ioengine.does_io:
                self.used.add(name)
                self.note(src, f"the {self.engine} engine has no file to sync")
            else:
                self.int_key(name, zero_means_off="0 is fio's default: no syncs")

    def _data(self) -> None:
        data = ("buffer_compress_percentage", "buffer_compress_chunk", "buffer_pattern",
                "zero_buffers", "refill_buffers", "dedupe_percentage", "scramble_buffers")
        if (why := self.never_writes()) is not None:
            for name in data:
                if (src := self.get(name)) is not None:
                    self.note(src, f"shapes written data, and {why}: fio ignores it")
            return
        self.int_key("buffer_compress_percentage")
        chunk = self.get("buffer_compress_chunk")
        if chunk is not None and (text := self.value(chunk)) is not None:
            if "buffer_compress_percentage" not in self.w.keys:
                self.note(chunk, "no buffer_compress_percentage: fio ignores it")
            else:
                try:
                    n = self.number(chunk, text, "size")
                except ValueProblem as exc:
                    self.refuse(chunk, str(exc))
                    n = None
                bs = self.w.keys.get("bs")
                if n == 0:
                    write_bs = bs.value["write"] if bs is not None and isinstance(
                        bs.value, dict) else bs.value if bs is not None else format_size_exact(
                        DEFAULT_BS)
                    if "bsrange" in self.w.keys or "bssplit" in self.w.keys:
                        self.refuse(chunk, "0 means one chunk per block, and this job's "
                                    "blocks vary in size: give a chunk size")
                    else:
                        self.put("buffer_compress_chunk", write_bs, chunk,
                                 "fio's 0: one chunk per block")
                elif n is not None:
                    self.put("buffer_compress_chunk", self.size_text(n), chunk)
        pattern = self.get("buffer_pattern")
        if pattern is not None and (text := self.value(pattern)) is not None:
            self._pattern(pattern, text)
        for name in ("zero_buffers", "refill_buffers"):
            self.bool_key(name)
        self.int_key("dedupe_percentage")
        scramble = self.get("scramble_buffers")
        shaped = any(k in self.w.keys for k in ("refill_buffers", "buffer_compress_percentage",
                                                "dedupe_percentage", "buffer_pattern",
                                                "zero_buffers"))
        if scramble is not None:
            self.note(scramble, "iogate never alters a buffer a little; refill_buffers "
                      "gives every write new contents")
        elif not shaped and "verify" not in self.opts:
            self.w.notes.append("fio alters each buffer a little before it is written again "
                                "(scramble_buffers); iogate writes it as it is: add "
                                "refill_buffers: true for new contents every write")

    def _pattern(self, src: Option, text: str) -> None:
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
            self.put("buffer_pattern", text, src)
        elif len(text) > 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
            inner = text[1:-1]
            # iogate reads a string as its bytes too, unless it looks like hex.
            keep = inner.strip()[:2].lower() == "0x" or inner != inner.strip()
            self.put("buffer_pattern", suite_text(text if keep else inner), src)
        elif text.startswith("'"):
            self.refuse(src, "a pattern read from a file: iogate takes hex (0xdeadbeef) or a "
                        "\"string\"")
        elif re.fullmatch(r"-?[0-9]+", text):
            self.refuse(src, "a decimal pattern: write its bytes in hex (0x...) or a "
                        "\"string\"")
        else:
            self.refuse(src, f"'{shown(text)}' is not a single hex value or \"string\"; fio's "
                        "combined patterns are not supported")

    def _verify(self) -> None:
        src = self.get("verify")
        names = {"crc32c": "crc32c", "crc32c-intel": "crc32c", "crc32": "crc32",
                 "xxhash": "xxhash", "0": "none", "null": "none"}
        if src is not None and (text := self.value(src)) is not None:
            if text not in names:
                self.refuse(src, f"verify '{shown(text)}' is not supported: " + VERIFY_WAY)
            elif names[text] == "none":
                self.note(src, "no verification")
            else:
                self.put("verify", names[text], src,
                         "fio's xxhash is XXH32, iogate's XXH64: the same check, a wider sum"
                         if text == "xxhash" else "")
        if "verify" in self.w.keys:
            self.int_key("verify_backlog")
            self.bool_key("verify_fatal")
        else:
            for name in ("verify_backlog", "verify_fatal"):
                if (other := self.get(name)) is not None:
                    self.note(other, "no verify: fio ignores it")

    def _loose_ends(self) -> None:
        """Every option not converted above: noted, accepted at its default, or refused."""
        for name, src in self.opts.items():
            if name in self.used or name in ("name", "description", "wait_for", "stonewall"):
                continue
            if src.value is None and src.key not in BARE_FLAGS and name in FIO_OPTIONS:
                self.refuse(src, f"fio needs a value: {src.key}=...")
            elif name in OUTPUT_ONLY:
                self.note(src, OUTPUT_ONLY[name])
            elif name in AS_IOGATE_DOES:
                self.note(src, AS_IOGATE_DOES[name])
            elif name in AT_DEFAULT and _default_value(src) in AT_DEFAULT[name]:
                self.note(src, "fio's default")
            elif name in SAME_MEANING and (meaning := SAME_MEANING[name].get(
                    _default_value(src), SAME_MEANING[name].get(None))) is not None:
                self.note(src, meaning)
            elif name in FIO_OPTIONS:
                hint = HINTS.get(name) or ("an option of fio's I/O engines; iogate's engines "
                                           "take none" if name in ENGINE_OPTIONS else "")
                self.refuse(src, f"fio's {src.key} is not supported" + (
                    f": {hint}" if hint else ": iogate has no such setting; remove it to "
                    "import the job"))
            else:
                close = [src.key.lower()] if src.key.lower() in FIO_OPTIONS else \
                    difflib.get_close_matches(src.key, sorted(FIO_OPTIONS), 1, 0.75)
                self.refuse(src, f"unknown fio option '{shown(src.key)}'" + (
                    f"; did you mean '{close[0]}'?" if close else ""))


_DISTRIBUTION: TypeAdapter[Any] = TypeAdapter(RandomDistribution)


def _operand(value: int | str) -> str:
    """A value as one term of a product: numbers and references as they are."""
    text = str(value)
    return text if isinstance(value, int) or _LONE_REF.fullmatch(text) else f"({text})"


def _default_value(src: Option) -> str:
    if src.value is None:
        return "1"
    return src.value.strip()



# -- names and sections -------------------------------------------------------------------

NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


def suite_name(raw: str, fallback: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode()
    name = NAME_BAD.sub("-", ascii_text).strip("-")[:NAME_MAX]
    return name or fallback


def effective(sections: list[Section]) -> list[tuple[Section, dict[str, Option]]]:
    """Each job with its options: the global sections above it, then its own; a later
    setting of an option replaces an earlier one, as fio parses them in order."""
    defaults: dict[str, Option] = {}
    jobs = []
    for section in sections:
        own: dict[str, Option] = {}
        for opt in section.options:
            name = ALIASES.get(opt.key, opt.key)
            if name == "name" and section.is_global:
                continue  # fio names each job by its section
            own[name] = opt
        if section.is_global:
            defaults.update(own)
        else:
            jobs.append((section, {**defaults, **own}))
    return jobs



def workload(section: Section, options: dict[str, Option], problems: Problems,
             used_names: set[str], env: Mapping[str, str] | None = None) -> list[Workload]:
    """The workload of one job, named apart from ``used_names`` (the name is added to it);
    every option that cannot be kept is added to ``problems``. A job whose clones fio gives
    files of their own is one workload per clone."""
    fio_name = (options["name"].value or "") if "name" in options and \
        options["name"].section == section.name and options["name"].value else \
        section.name
    w = Workload(section, fio_name)
    w.name = _unique(suite_name(fio_name, "job"), used_names)
    stonewall = options.get("stonewall")
    if stonewall is not None:
        try:
            w.stonewall = _flag(stonewall)
        except ValueProblem as exc:
            problems.option(stonewall, str(exc))
    w.wait_for = options.get("wait_for")
    desc = options.get("description")
    if desc is not None and desc.section != "global" and desc.value:
        w.notes.insert(0, desc.value)
    job = _Job(problems, w, options, env)
    try:
        job.convert()
    except ValueProblem as exc:  # a value problem outside the steps' own handling
        problems.add(section.line, f"[{section.name}]", str(exc))
    if not job.clone_files:
        return [w]
    # One workload per fio clone, each on its own files; they run together (one group).
    used_names.discard(w.name)
    clones = []
    where = w.keys["filename"].src if "filename" in w.keys else None
    for k, files in enumerate(job.clone_files):
        keys = dict(w.keys)
        if files:
            keys["filename"] = Entry(files[0] if len(files) == 1 else files, where)
        clones.append(replace(w, name=_unique(f"{w.name}.{k}", used_names), keys=keys,
                              notes=list(w.notes), clone=k, stonewall=w.stonewall and k == 0))
    return clones


def _unique(base: str, used_names: set[str]) -> str:
    """``base``, or ``base-N`` when taken, within iogate's name length; added to the set."""
    name, n = base[:NAME_MAX], 1
    while name in used_names:
        n += 1
        name = f"{base[:NAME_MAX - len(str(n)) - 1]}-{n}"
    used_names.add(name)
    return name
