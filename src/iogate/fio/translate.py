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
    fio_pattern,
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
    FIO_VERIFY_KINDS,
    HINTS,
    MODES,
    OUTPUT_ONLY,
    SAME_MEANING,
    VERIFY_REFUSED,
    VERIFY_STATE,
    VERIFY_WAY,
    engine_for,
)
from iogate.spec.fields import DEFAULT_BS, FILES_MAX, NAME_MAX, RandomDistribution
from iogate.spec.modes import MIXED, TRIM_MODES, directions_of, field_directions_of
from iogate.spec.variables import expand_tree
from iogate.units import format_duration_exact, format_size_exact, parse_size

__all__ = ["NAME_BAD", "Entry", "Workload", "effective", "link_readbacks", "suite_name",
           "workload"]

# -- the result ---------------------------------------------------------------------------


# fio's batching options (canonical names) and the suite key of each
_BATCH_KEYS = (("iodepth_batch", "iodepth_batch_submit"),
               ("iodepth_batch_complete_min", "iodepth_batch_complete_min"),
               ("iodepth_batch_complete_max", "iodepth_batch_complete_max"),
               ("iodepth_low", "iodepth_low"))


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


# -- one job ------------------------------------------------------------------------------

_CLONES_MAX = 256  # workloads one job under directory may become, one per fio clone

_LONE_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$(?:" + "|".join(KEYWORDS) + r")")
# A drive letter (F:...) or a device namespace path (\\.\PhysicalDrive0, \\?\...).
_WINDOWS_PATH = re.compile(r"[A-Za-z]:|\\\\[.?]\\")


# fio's default file names, and the keywords filename_format takes.
_FILENAME_FORMAT = "$jobname.$jobnum.$filenum"
_FORMAT_KEYS = ("$jobname", "$jobnum", "$filenum")


def _share(text: str) -> str | None:
    """fio's percentage of the file or device ('20%') as the suite writes it, or None."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*", text)
    return f"{m.group(1)}%" if m else None


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
        self.clones: list[dict[str, Entry]] = []  # the keys each fio clone has of its own
        self.offset: int | str | None = 0  # in bytes, or an expression; None: a share
        self.size_per_file = False  # fio's nrfiles files: size/nrfiles each
        self.runtime_ns: int | None = None  # when known in the file

    # helpers
    def get(self, name: str) -> Option | None:
        self.used.add(name)
        return self.opts.get(name)

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

    def checked(self, src: Option, text: str, kind: str) -> int | str | None:
        """:meth:`number`, or None once the problem is reported at the option."""
        try:
            return self.number(src, text, kind)
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return None

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
        if (n := self.checked(src, text, "count")) is None:
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
        self._offset_increment()
        self._block_sizes()
        self._iodepth()
        self._batching()
        self._times()
        self._limits()
        self._direct()
        self._mix()
        self._rates()
        self._rate_floors()
        self._steady_state()
        self._randomness()
        self._thinktime()
        self._syncs()
        self._open_sync()
        self._end_fsync()
        self.bool_key("fill_device")
        self._flow()
        self._priorities()
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
        mode, colon, modifier = text.partition(":")
        if mode not in MODES:
            close = difflib.get_close_matches(mode, MODES, 1)
            self.refuse(src, f"unknown rw '{shown(mode)}'" + (
                f"; did you mean '{close[0]}'?" if close else
                f"; iogate runs {', '.join(MODES)}"))
        elif colon and mode.startswith("rand"):
            self.refuse(src, f"'{shown(text)}': fio's ':N' of a random mode issues N "
                        f"sequential requests from each random offset; iogate's random "
                        f"workloads draw every offset: write rw={mode}")
        else:
            self.rw = "rw" if mode == "readwrite" else mode
            self.put("rw", self.rw, src)
            if colon:
                self._seq_skip(src, modifier.strip())
        sequencer = self.get("rw_sequencer")
        if sequencer is not None and (sequencer.value or "").strip() != "sequential" and \
                "seq_skip" in self.w.keys:
            self.refuse(sequencer, "rw_sequencer=identical repeats each offset; iogate's "
                        "seq_skip only moves on: remove it")
        elif sequencer is not None:
            self.note(sequencer, "a sequential job's offsets are sequential either way")

    def _seq_skip(self, src: Option, text: str) -> None:
        """fio's offset modifier of a sequential mode (rw=read:8k): seq_skip."""
        back = text.startswith("-")
        if (n := self.checked(src, text[1:].strip() if back else text, "size")) is None:
            return
        if n == 0:
            self.note(src, "':0' skips nothing")
            return
        if isinstance(n, int):
            self.put("seq_skip", ("-" if back else "") + format_size_exact(n), src)
        else:
            self.put("seq_skip", f"-({n})" if back else n, src)

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

    def names_files(self) -> bool:
        """Whether fio names the job's files itself: no filename, and a directory, several
        files or a filename_format. The import then names them as fio does."""
        if "filename" in self.opts:
            return False
        nrfiles = self.opts.get("nrfiles")
        several = nrfiles is not None and (nrfiles.value or "").strip() not in ("", "1")
        return "directory" in self.opts or several or "filename_format" in self.opts

    def filename_format(self) -> str:
        src = self.opts.get("filename_format")
        return (src.value or "").strip() if src is not None else _FILENAME_FORMAT

    def _numjobs(self) -> None:
        n = self.int_key("numjobs")
        if n is None:
            return
        increment = self.opts.get("offset_increment")
        own_files = self.names_files() and "$jobnum" in self.filename_format()
        own_region = increment is not None and (increment.value or "").strip() not in ("", "0")
        if n != 1 and (own_files or own_region):
            # fio gives each clone its own files (JOB.N.F) or its own offset; iogate's threads
            # share their workload's region, so each clone becomes a workload (_files, _sizes).
            src = self.w.keys.pop("numjobs").src
            assert src is not None
            what = "files" if own_files else "region (offset_increment)"
            if not isinstance(n, int):
                self.refuse(src, f"fio gives each clone its own {what}; iogate's threads "
                            "share their workload's, so the import makes a workload per clone "
                            "and needs their number: write numjobs as a number")
                return
            if n > _CLONES_MAX:
                self.refuse(src, f"numjobs={n} with a {what} per clone would be {n} "
                            f"workloads, one per clone; the import makes at most {_CLONES_MAX}")
                return
            self.clones = [{} for _ in range(n)]
            self.note(src, f"fio gives each of its {n} clones its own {what}; iogate's threads "
                      "would share one workload's, so each clone is a workload of its own, one "
                      "thread, all run together (fio reports each clone on its own too, unless "
                      "group_reporting)")
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
        dtext: str | None = None
        if directory is not None:
            dtext = self.value(directory)
            if dtext is None:
                return
            if ":" in dtext.replace("\\:", ""):
                self.refuse(directory, "several directories: iogate takes one; name the "
                            "files in filename")
                return
            dtext = dtext.replace("\\:", ":").rstrip("/") or "/"
            if names:
                names = [dtext + "/" + n for n in names]
                self.note(directory, "joined to the file names")
        fmt_src = self.get("filename_format")
        if names and fmt_src is not None:
            self.note(fmt_src, "fio ignores filename_format when filename is given")
        elif not names and self.names_files():
            names = self._named_files(dtext, count, fmt_src or directory or nrfiles)
            if not names:
                return
            if nrfiles is not None:
                self.note(nrfiles, f"fio's {count} {'files' if count > 1 else 'file'} of the "
                          "job, named in filename")
        if nrfiles is not None and count != 1 and src is not None:
            self.note(nrfiles, "fio ignores nrfiles when filename is given")
        self._open_files(count if not src else len(names))
        self.bool_key("allow_file_create")
        if self.w.keys.get("allow_file_create", Entry(True, None)).value is True:
            self.w.keys.pop("allow_file_create", None)  # fio's default and iogate's
        if not names and not ("size" in self.opts or "filesize" in self.opts):
            return  # a template for a target named when it runs (see _sizes)
        if not names:
            self.w.notes.append("no filename: fio makes a file per job and clone in the "
                                "working directory (JOB.0.0); iogate a temporary one per "
                                "workload, shared by its threads, in $IOGATE_TMPDIR (else "
                                "/var/tmp), removed afterwards")
            return
        where = src or directory or self.opts.get("filename_format") or nrfiles
        self.files = len(names)
        values = [suite_text(n) for n in names]
        comment = ""
        if any(has_reference(n) for n in names):
            comment = "fio splits a variable's value at ':' into several files; iogate reads " \
                      "it as one name"
        self.put("filename", values[0] if len(values) == 1 else values, where, comment)

    def _named_files(self, directory: str | None, count: int, where: Option | None) -> list[str]:
        """The files fio names for the job (filename_format in directory, else in the
        working directory), for its first clone; each clone's in its clone keys. Empty when
        refused."""
        fmt = self.filename_format()
        unknown = sorted(set(re.findall(r"\$\w+", fmt)) - set(_FORMAT_KEYS))
        assert where is not None
        if unknown:
            self.refuse(where, f"filename_format: {', '.join(unknown)} "
                        + ("is fio's client id: iogate runs on one host"
                           if unknown == ["$clientuid"] else "is not one of fio's keywords "
                           "($jobname, $jobnum, $filenum)"))
            return []

        def files_of(clone: int) -> list[str]:
            out = []
            for f in range(count):
                name = fmt
                for key, value in (("$jobname", self.w.fio_name), ("$jobnum", str(clone)),
                                   ("$filenum", str(f))):
                    name = name.replace(key, value)
                out.append(name if directory is None else f"{directory}/{name}")
            return out

        names = files_of(0)
        if len(set(names)) < len(names):
            self.refuse(where, f"filename_format={fmt} gives the {count} files of the job one "
                        "name: add $filenum")
            return []
        self.size_per_file = count > 1
        for k, clone in enumerate(self.clones):
            files = files_of(k)
            clone["filename"] = Entry(files[0] if len(files) == 1 else files, where)
        first, last = (path.rsplit("/", 1)[-1] for path in (names[0], names[-1]))
        self.note(where, f"fio's file {'names' if count > 1 else 'name'} for the job, {first}"
                  + (f" to {last}" if count > 1 else "")
                  + (" for its first clone, each clone its own" if self.clones else "")
                  + f" ({fmt}), in " + ("that directory" if directory is not None else
                                        "the working directory, where fio makes them too"))
        return names

    def _open_files(self, count: int) -> None:
        """fio's openfiles and file_service_type: how the job goes from file to file."""
        src = self.get("openfiles")
        if src is not None and (text := self.value(src)) is not None:
            try:
                n = fio_size(text)
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                return
            if n and n < count:
                self.refuse(src, f"openfiles={n} of {count} files: fio then finishes a file "
                            "before it opens the next; iogate keeps every file of a workload "
                            "open and goes to them in turn (fio's roundrobin): remove it")
            else:
                self.note(src, "iogate keeps every file of the workload open, as fio does "
                          "with this many")
        service = self.get("file_service_type")
        if service is not None and (text := self.value(service)) is not None:
            if text.strip() in ("roundrobin", "roundrobin:1"):
                self.note(service, "iogate goes to the files of a workload in turn, as fio's "
                          "roundrobin")
            else:
                self.refuse(service, f"file_service_type={text}: iogate goes to the files of "
                            "a workload in turn, one request each (fio's roundrobin)")

    def _offset_increment(self) -> None:
        """fio's offset_increment: clone k of the job starts at offset + k * increment."""
        src = self.get("offset_increment")
        if src is None or (text := self.value(src)) is None:
            return
        if (step := self.checked(src, text, "size")) is None:
            return
        if not self.clones:
            if step:
                self.note(src, "one clone: fio moves no offset")
            return
        if not isinstance(step, int) or not isinstance(self.offset, int):
            self.refuse(src, "offset_increment with an offset or increment that is a share or "
                        "a variable: give both in bytes")
            return
        for k, clone in enumerate(self.clones):
            at = self.offset + k * step
            clone["offset"] = Entry(self.size_text(at) if at else 0, src,
                                    f"fio's clone {k}: offset + {k} x offset_increment"
                                    if k else "")

    def _sizes(self) -> None:
        size = self.get("size")
        filesize = self.get("filesize")
        offset = self.get("offset")
        size_value: int | str | None = None
        if size is not None and (text := self.value(size)) is not None and _share(text):
            # A share of every file's size: the same meaning in iogate (plan.sized).
            self.put("size", _share(text), size)
        elif size is not None and (text := self.value(size)) is not None:
            if (size_value := self.checked(size, text, "size")) is None:
                return
        if filesize is not None and (text := self.value(filesize)) is not None:
            if re.search(r"\d\s*[-:]\s*\d", text) and "(" not in text:
                self.refuse(filesize, "a range of file sizes: iogate's files of a job are "
                            "all one size")
                return
            if (per_file := self.checked(filesize, text, "size")) is None:
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
                if time_based is not None and time_based.value in (None, "1"):
                    comments.append(f"size={size.value} ({size.where}) is the amount fio "
                                    "moves; time_based runs past it")
                elif "io_size" in self.opts or "loops" in self.opts \
                        or not isinstance(size_value, int) or not isinstance(total, int):
                    self.refuse(filesize, "size and filesize both given, with io_size, "
                                "loops or a size from a variable: fio lays out files of "
                                "filesize and moves the smaller of size and their total; "
                                "give the amount to move as io_size alone")
                    return
                elif size_value < total:
                    # fio moves size bytes over the files, then stops: iogate's io_size.
                    self.put("io_size", self.size_text(size_value), size,
                             f"with filesize (line {filesize.line}) fio's size is the amount "
                             "each thread moves over its files: iogate's io_size")
                else:
                    comments.append(f"size={size.value} ({size.where}) is more than the "
                                    "files hold: fio moves them once, as iogate does")
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
        elif size is None and "filename" not in self.w.keys:
            # A template: fio is given the target on its command line (--filename=...).
            self.w.notes.append("no size and no filename: fio takes them from its command "
                                "line; name the target when you run it: --set filename=PATH "
                                "(a file or device used whole, or add --set size=...)")
        elif size is None and (fill := self.get("fill_device")) is not None \
                and fill.value != "0":
            self.w.notes.append("no size: fill_device writes until the filesystem is full, "
                                "as fio")
        elif size is None:
            self.w.notes.append("no size: the whole file or device, from offset to its end, "
                                "as fio")
        if offset is not None and (text := self.value(offset)) is not None and _share(text):
            self.put("offset", _share(text), offset)
            self.offset = None
        elif offset is not None and (text := self.value(offset)) is not None:
            if (n := self.checked(offset, text, "size")) is None:
                return
            self.put("offset", self.size_text(n) if n else 0, offset)
            self.offset = n
        align = self.get("offset_align")
        if align is not None and (text := self.value(align)) is not None:
            if offset is None or offset.value is None or not _share(offset.value):
                self.note(align, "offset_align only rounds an offset given as a percentage: "
                          "fio ignores it here, and so does iogate")
                return
            if (n := self.checked(align, text, "size")) is None:
                return
            if n:  # 0: fio's default, the smallest block size, as iogate's
                self.put("offset_align", self.size_text(n), align)

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

    def _batching(self) -> None:
        """fio's submission batching, each option under iogate's key of fio's long name,
        with fio's fixes of out-of-range values spelled out; left out where fio has no
        queue to batch (a synchronous engine, iodepth 1)."""
        given = [(src, key) for name, key in _BATCH_KEYS
                 if (src := self.get(name)) is not None]
        if not given:
            return
        ioengine = catalog.get(self.engine)
        depth_entry = self.w.keys.get("iodepth")
        depth = depth_entry.value if depth_entry is not None else 1
        for src, key in given:
            if ioengine is not None and not ioengine.queued:
                self.note(src, f"fio's {self.engine} is synchronous: one request in flight, "
                          "nothing to batch")
            elif depth == 1:
                self.note(src, "iodepth is 1: one request in flight, nothing to batch")
            elif (text := self.value(src)) is not None and \
                    (n := self.checked(src, text, "count")) is not None:
                self._batch_key(src, key, n, depth)
        low = self.w.keys.get("iodepth_batch_complete_min")
        high = self.w.keys.get("iodepth_batch_complete_max")
        if low is not None and isinstance(low.value, int) and low.value > 1 and (
                high is None or isinstance(high.value, int) and high.value < low.value):
            self.put("iodepth_batch_complete_max", low.value, low.src,
                     f"fio collects at most iodepth_batch_complete_min ({low.value}) "
                     "completions at once when iodepth_batch_complete_max is not larger")

    def _batch_key(self, src: Option, key: str, n: int | str, depth: int | str) -> None:
        """One batching option's value as fio runs it: 0 and values above iodepth are
        fio's default or iodepth."""
        if n == 0:
            if key == "iodepth_batch_complete_min":
                self.note(src, "0: fio checks for completions without waiting before it "
                          "issues more; iogate collects them when it cannot issue more, "
                          "waiting for at least one")
            elif key == "iodepth_batch_complete_max":
                self.note(src, "0 is fio's default: as many as iodepth_batch_complete_min")
            else:
                self.put(key, depth, src, f"fio's {src.key}=0 means iodepth")
            return
        if isinstance(n, int) and isinstance(depth, int) and n > depth:
            self.put(key, depth, src, f"fio takes {src.key}={n} as iodepth ({depth})")
            return
        self.put(key, n, src)

    def _times(self) -> None:
        for name in ("runtime", "ramp_time"):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            if (n := self.checked(src, text, "time_s")) is None:
                continue
            if n == 0:
                self.note(src, "0 is fio's default: no limit" if name == "runtime" else
                          "0 is fio's default: none")
                continue
            self.put(name, format_duration_exact(n) if isinstance(n, int) else n, src)
            if name == "runtime" and isinstance(n, int):
                self.runtime_ns = n
        time_based = self.opts.get("time_based")
        if time_based is not None and "runtime" not in self.w.keys:
            self.used.add("time_based")
            self.note(time_based, "no runtime: fio ignores it")
        else:
            self.bool_key("time_based")

    def _limits(self) -> None:
        """io_size, number_ios and loops (how much each thread does) and startdelay."""
        timed = getattr(self.w.keys.get("time_based"), "value", False) is True
        loops = self._loops(timed)
        for name, kind in (("io_size", "size"), ("number_ios", "count")):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            if timed:
                self.note(src, "time_based: fio runs until its runtime and ignores it")
                continue
            if (n := self.checked(src, text, kind)) is None:
                continue
            if n == 0:
                self.note(src, "0 is fio's default: none")
                continue
            if loops is not None:
                self.put(name, _times(loops[0], n, kind), src, loops[1])
            else:
                self.put(name, self.size_text(n) if kind == "size" else n, src)
        if loops is not None and "io_size" not in self.w.keys:
            n, comment = loops
            size = self.w.keys["size"]
            self.put("io_size", _times(n, size.value, "size"), self.opts["loops"], comment)
        self._startdelay()

    def _loops(self, timed: bool) -> tuple[int, str] | None:
        """fio's loops as a multiple of each pass (count, comment), or None for one pass."""
        src = self.get("loops")
        if src is None or (text := self.value(src)) is None:
            return None
        if (n := self.checked(src, text, "count")) is None:
            return None
        if not isinstance(n, int):
            self.refuse(src, "loops from a variable: iogate multiplies io_size by it; write "
                        "the number in the file")
            return None
        if n < 1:
            self.refuse(src, "fio takes loops=1 or more")
            return None
        if n == 1:
            self.note(src, "fio's default: one pass")
            return None
        if timed:
            self.note(src, "time_based: fio runs until its runtime, whatever loops says")
            return None
        if "size" not in self.w.keys and self.get("io_size") is None:
            self.refuse(src, f"loops={n} without size: iogate's io_size would be {n} times "
                        "the size of the file, unknown here: give size")
            return None
        return n, (f"fio's loops={n} (line {src.line}): {n} passes, each starting at the "
                   "region's start and dropping the page cache first (invalidate); iogate "
                   "goes on over the region without dropping it again")

    def _startdelay(self) -> None:
        src = self.get("startdelay")
        if src is None or (text := self.value(src)) is None:
            return
        if re.search(r"\d\s*[-:]\s*\d", text) and "(" not in text:
            self.refuse(src, "a range of delays, one drawn per clone: iogate delays the "
                        "workload by one value")
            return
        if (n := self.checked(src, text, "time_s")) is None:
            return
        if n == 0:
            self.note(src, "0 is fio's default: none")
            return
        self.put("startdelay", format_duration_exact(n) if isinstance(n, int) else n, src,
                 "fio counts it from the start of its run, iogate from the start of the "
                 "workload's group")

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
                self.note(other, f"fio uses {src} ({src.where}), read later")
        if self.rw is not None and self.rw not in MIXED:
            self.note(src, f"fio ignores it for rw={self.rw}")
            return
        text = self.value(src)
        if text is None:
            return
        if (n := self.checked(src, text, "count")) is None:
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

    def _rate_values(self, name: str, kind: str, src: Option,
                     text: str) -> dict[str, int | str] | None:
        """fio's per-direction rate ('r,w', or 'r,w,t' for a trim job) by the slot it takes
        (a trim's is the write one), zeros left out; None when refused."""
        if self.rw is None:
            self.refuse(src, f"{name} with rw from a variable: fio's rate is per direction, "
                        "iogate's single rate is split by the mix; set rw in the file")
            return None
        if self.rw in TRIM_MODES and len(directions_of(self.rw)) == 2:
            self.refuse(src, f"{name} with rw={self.rw}: iogate does not limit the rate of "
                        "trim and write pairs; limit a trim or a write job instead")
            return None
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
            return None
        return values

    def _rate_floors(self) -> None:
        """fio's rate_min and rate_iops_min end a job that falls below them over a
        rate_cycle: in iogate, an expectation on every interval of that length."""
        cycle_ns = 1_000_000_000
        cycle = self.get("rate_cycle")
        if cycle is not None and (text := self.value(cycle)) is not None:
            if (n := self.checked(cycle, text, "count")) is None:  # milliseconds
                return
            if not isinstance(n, int) or n <= 0:
                self.refuse(cycle, "rate_cycle is a whole number of milliseconds, above 0")
                return
            cycle_ns = n * 1_000_000
        expect: dict[str, str] = {}
        first: Option | None = None
        for name, metric, kind in (("rate_min", "bw", "size"), ("rate_iops_min", "iops",
                                                                "count")):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            values = self._rate_values(name, kind, src, text)
            if values is None:
                continue
            first = first or src
            for d, v in values.items():
                total = v if self.numjobs == 1 else (
                    v * self.numjobs if isinstance(v, int) and isinstance(self.numjobs, int)
                    else f"{_operand(v)} * {_operand(self.numjobs)}")
                shown_v = (format_size_exact(total) + "/s" if isinstance(total, int)
                           and kind == "size" else str(total))
                direction = "trim" if self.trims() and d == "write" else d  # its slot
                expect[f"{direction}.{metric}"] = f">= {shown_v} in all of " \
                                          f"{format_duration_exact(cycle_ns)}"
        if first is None:
            if cycle is not None:
                self.note(cycle, "no rate_min or rate_iops_min: fio ignores it")
            return
        self.put("expect", expect, first, "fio ends a job that falls below its minimum rate "
                 "over a rate_cycle; iogate runs on and fails the case if any interval of that "
                 "length fell below it" + (f" (fio's minimum is per clone: times "
                                           f"numjobs={self.numjobs})"
                                           if self.numjobs != 1 else ""))

    def _steady_state(self) -> None:
        """fio's steadystate (ss): the job ends early once the last ss_dur of samples (one
        every ss_interval) of its IOPS, bandwidth or mean completion latency are steady; in
        iogate, rounds of ss_interval until a window of ss_dur is, at most the runtime."""
        src = self.get("steadystate")
        others = [o for name in ("steadystate_duration", "steadystate_ramp_time",
                                 "steadystate_check_interval")
                  if (o := self.get(name)) is not None]
        if src is None or (text := self.value(src)) is None:
            for other in others:
                self.note(other, "no steadystate: fio ignores it")
            return
        m = re.fullmatch(r"(iops|bw|lat)(_slope)?:([0-9]+(?:\.[0-9]+)?)(%?)", text)
        dirs = self.dirs()
        if m is None:
            self.refuse(src, "fio's steadystate is iops, iops_slope, bw, bw_slope, lat or "
                        "lat_slope and a limit, e.g. iops:10% or bw_slope:0.1%")
            return
        if not m.group(4):
            self.refuse(src, "an absolute limit: iogate's steady-state limits are percentages "
                        "of the mean; write it as N%")
            return
        if dirs is None:
            self.refuse(src, "steadystate with rw from a variable: set rw in the file")
            return
        if m.group(1) == "lat" and len(dirs) != 1:
            self.refuse(src, f"steady latency of rw={self.rw}: fio judges the completion "
                        "latency of every direction together; iogate tracks one metric of "
                        "one direction (e.g. read.clat.mean): give the job one direction")
            return
        times: dict[str, int] = {}
        for name in ("steadystate_duration", "steadystate_ramp_time",
                     "steadystate_check_interval"):
            if (opt := self.opts.get(name)) is None:
                continue
            if (t := self.value(opt)) is None:
                return
            if (n := self.checked(opt, t, "time_s")) is None:
                return
            if not isinstance(n, int):
                self.refuse(opt, "a duration from a variable: set it in the file")
                return
            times[name] = n
        interval = times.get("steadystate_check_interval", 1_000_000_000)
        if interval <= 0:
            self.refuse(self.opts["steadystate_check_interval"], "fio's check interval is a "
                        "positive duration")
            return
        duration = times.get("steadystate_duration", 0)
        if duration < 2 * interval:
            self.refuse(src, "steadystate needs ss_dur of at least two check intervals "
                        f"({format_duration_exact(2 * interval)}): the window of samples it "
                        "judges")
            return
        runtime_ns = self.runtime_ns  # None when not given, or from a variable
        if runtime_ns is None:
            self.refuse(src, "steadystate needs a runtime, its longest run, set in the file")
            return
        tracked = "clat.mean" if m.group(1) == "lat" else m.group(1)
        metric = f"{dirs[0] if len(dirs) == 1 else 'total'}.{tracked}"
        limit = float(m.group(3))
        window = duration // interval
        steady: dict[str, Any] = {"metric": metric, "round": format_duration_exact(interval),
                                  "window": window,
                                  "max_rounds": max(1, runtime_ns // interval)}
        if m.group(2):  # fio: |slope per sample| / mean; iogate: across the window
            steady.update(range_pct=None, slope_pct=round(limit * (window - 1), 9))
        else:
            steady.update(range_pct=None, slope_pct=None, deviation_pct=limit)
        if times.get("steadystate_ramp_time"):
            steady["ramp"] = format_duration_exact(times["steadystate_ramp_time"])
        self.put("steady_state", steady, src,
                 f"fio samples the job every {format_duration_exact(interval)} and ends it once "
                 "the last ss_dur of samples are steady; iogate runs rounds that long until a "
                 "window of them is, at most "
                 f"runtime={format_duration_exact(runtime_ns)} (each round "
                 "is a run of its own); fio keeps the results when steady state is not "
                 "reached, iogate fails the case (on_unsteady: skip to skip it)")

    def _rate(self, name: str, kind: str, src: Option, text: str) -> None:
        dirs = self.dirs()
        values = self._rate_values(name, kind, src, text)
        if values is None or dirs is None:
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
            if text.startswith("sequence"):
                if not random_rw:
                    self.note(src, f"fio ignores it for rw={self.rw}")
                else:
                    self.put("random_distribution", text, src)
            elif "," in text:
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
                self._skew_notes(text)
        stride = self.get("random_sequence_stride")
        chosen = self.w.keys.get("random_distribution")
        if stride is not None and chosen is not None \
                and str(chosen.value).startswith("sequence"):
            self.bool_key("random_sequence_stride")
        elif stride is not None:
            self.note(stride, "no sequence distribution: fio ignores it")
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
                                "iogate draws offsets independently, like fio's norandommap: "
                                "one pass over the region touches about 63% of its blocks "
                                "(1 - 1/e), some of them more than once")
            if "bssplit" in self.w.keys or "bsrange" in self.w.keys:
                self.w.notes.append(
                    "with several block sizes fio's random map also shortens requests to the "
                    "untouched blocks left at an offset, so fio issues smaller requests and "
                    "more of them than the split says (one bssplit job measured a mean read "
                    "of 4835 bytes with the map, 11528 with norandommap and in iogate): "
                    "sizes, IOPS and the number of requests differ; add norandommap to the "
                    "fio job to compare them")

    def _skew_notes(self, text: str) -> None:
        """How fio's zipf and pareto differ from the distributions iogate draws: fio spreads
        the drawn ranks over the blocks by a hash, and approximates zipf."""
        kind = text.partition(":")[0]
        if kind not in ("zipf", "pareto"):
            return
        self.w.notes.append(
            f"fio maps each drawn rank to a block by a hash modulo the number of blocks: unless "
            f"that number is a power of two, many blocks are never drawn (of 1000 blocks it "
            f"draws 308) and the ranks that share a block add up; iogate's {kind} permutes "
            f"the ranks over every block")
        if kind == "zipf":
            self.w.notes.append(
                "fio's zipf is an approximation that draws the ranks after the first two more "
                "often than zipf does (at zipf:1.2 over 1024 blocks its 10 hottest blocks took "
                "about 59% of the reads, zipf's 10 hottest ranks 56.8%); iogate draws zipf "
                "exactly")

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
            if (n := self.checked(src, text, "time_us")) is None:
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

    def _flow(self) -> None:
        """flow, flow_id and flow_sleep: the weights of the jobs that run together; a job
        in another stonewall group never shares a flow with this one, in fio (a job that
        ends leaves its flow) as in iogate (groups run one after another)."""
        weight = self.int_key("flow", zero_means_off="0 is fio's default: no flow control")
        others = [src for name in ("flow_id", "flow_sleep") if (src := self.get(name)) is not None]
        if weight is None:
            for src in others:
                self.note(src, "no flow weight: fio ignores it")
            return
        self.int_key("flow_id")
        sleep = self.get("flow_sleep")
        if sleep is not None and (text := self.value(sleep)) is not None \
                and (n := self.checked(sleep, text, "time_us")) is not None:
            self.put("flow_sleep", format_duration_exact(n) if isinstance(n, int) else n, sleep)

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

    def _open_sync(self) -> None:
        """sync: the files opened O_SYNC (1, sync) or O_DSYNC (dsync) for writing."""
        src = self.get("sync")
        if src is None or (text := self.value(src)) is None:
            return
        mode = {"0": "none", "none": "none", "1": "sync", "sync": "sync",
                "dsync": "dsync"}.get(text.lower())
        if mode is None:
            self.refuse(src, f"'{shown(text)}' is none of fio's 0, 1, none, sync, dsync")
        elif mode == "none":
            self.note(src, "fio's default: no O_SYNC")
        elif (why := self.never_writes()) is not None:
            self.note(src, f"{why}: nothing is written durably")
        elif self.engine == "mmap":
            self.refuse(src, "mmap writes reach the file through memory, where O_SYNC has no "
                        "effect: use fsync=N, or another engine")
        else:
            self.put("sync", mode, src)

    def _end_fsync(self) -> None:
        """end_fsync and fsync_on_close: a sync of each file as the job ends."""
        given = [src for name in ("end_fsync", "fsync_on_close")
                 if (src := self.get(name)) is not None]
        on = []
        for src in given:
            if src.value is not None and has_reference(src.value):
                self.refuse(src, "fio reads 0 or 1 from the variable, iogate true or false: "
                            "set the value in the file")
                return
            try:
                if _flag(src):
                    on.append(src)
                else:
                    self.note(src, "fio's default: no sync")
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                return
        if not on:
            return
        if (why := self.never_writes()) is not None:
            for src in on:
                self.note(src, f"{why}: fio never syncs")
        elif (ioengine := catalog.get(self.engine)) is not None and not ioengine.does_io:
            for src in on:
                self.note(src, f"the {self.engine} engine has no file to sync")
        else:
            close = [s for s in on if s.key == "fsync_on_close"]
            comment = ("fio's fsync_on_close syncs each file as it closes it, when the job "
                       "ends; " if close and len(on) == 1 else "") + \
                "fio leaves this sync out of its statistics (its time is in the runtime), " \
                "iogate counts it under sync"
            self.put("end_fsync", True, on[0], comment)
            for src in on[1:]:
                self.note(src, "one sync of each file at the end: end_fsync")

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
        else:  # decimal numbers, or several parts one after another: their bytes in hex
            try:
                data = fio_pattern(text)
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                return
            self.put("buffer_pattern", "0x" + data.hex(), src,
                     f"fio's pattern {shown(text)}, byte for byte")

    def _verify(self) -> None:
        """fio's verify and its options. A job with do_verify=0 writes verifiable blocks and
        leaves them to a later job that reads them back (rw=read with verify): iogate reads
        back in the job that writes, so :func:`link_readbacks` moves that check onto the
        writer once every job is converted."""
        src = self.get("verify")
        kind = None
        if src is not None and (text := self.value(src)) is not None:
            if text not in FIO_VERIFY_KINDS:
                self.refuse(src, f"verify '{shown(text)}' is not supported: " + VERIFY_WAY)
            elif FIO_VERIFY_KINDS[text] == "none":
                self.note(src, "no verification")
            else:
                kind = FIO_VERIFY_KINDS[text]
        pattern = self._verify_pattern()
        if pattern is not None and kind is None and src is None:
            kind = "crc32c"  # fio checks the pattern itself: iogate checksums the block
        origin = src if src is not None else pattern
        if kind is not None and origin is not None:
            self._verify_kind(origin, kind, pattern)
        self._verify_state_options(kind is not None)

    def _verify_pattern(self) -> Option | None:
        """verify_pattern: the data fio writes and checks. Written as buffer_pattern with
        every byte from it (compressibility 100); None when not given or refused."""
        src = self.get("verify_pattern")
        if src is None or (text := self.value(src)) is None:
            return None
        if self.never_writes() is not None:
            return src  # the pattern of blocks written by another job (see link_readbacks)
        shaped = [k for k in ("buffer_pattern", "buffer_compress_percentage", "zero_buffers")
                  if k in self.w.keys]
        if shaped:
            self.refuse(src, f"fio writes the verify pattern in place of {shaped[0]}: give "
                        "one of them")
            return None
        self._pattern(src, text)
        if "buffer_pattern" not in self.w.keys:
            return None  # refused by _pattern
        self.put("buffer_compress_percentage", 100, src,
                 "every byte from the pattern, as fio's verify_pattern writes it")
        return src

    def _verify_kind(self, src: Option, kind: str, pattern: Option | None) -> None:
        comments = []
        if src.key == "verify" and src.value and src.value.strip() == "xxhash":
            comments.append("fio's xxhash is XXH32, iogate's xxh32")
        if pattern is not None:
            comments.append(
                "fio checks the data against verify_pattern; iogate checks the header, the "
                "sector stamps and no data with meta" if kind == "meta" else
                "fio's verify_pattern without verify checks the pattern itself; iogate "
                "checks the block's crc32c, which the pattern's bytes make up"
                if src is pattern else
                "the blocks hold verify_pattern (buffer_pattern) and the checksum covers it")
        interval = self.get("verify_interval")
        if interval is not None and (text := self.value(interval)) is not None:
            if (n := self.checked(interval, text, "size")) is None:
                return
            bs = self.w.keys.get("bs")
            write_bs = bs.value.get("write") if bs is not None and isinstance(
                bs.value, dict) else bs.value if bs is not None else DEFAULT_BS
            if not isinstance(n, int) or not (n % 512 == 0 or (
                    isinstance(write_bs, int) and n >= write_bs)):
                self.refuse(interval, f"verify_interval={text}: iogate checks every 512-byte "
                            "sector's stamp and the whole block's checksum; an interval that "
                            "is a multiple of 512 (or the block size) keeps fio's meaning")
                return
            self.note(interval, "iogate checks every 512-byte sector's stamp and the whole "
                      "block's checksum: at least as fine as fio's interval")
        do = self.get("do_verify")
        reads_back = True
        if do is not None:
            try:
                reads_back = _flag(do)
            except ValueProblem as exc:
                self.refuse(do, str(exc))
                return
        if self.dirs() == ("read", "write"):
            comments.append("fio, like iogate, reads back the blocks this job wrote after its "
                            "run; the reads of the mix are not checked")
        entry = Entry(kind, src, "; ".join(comments))
        if do is not None and not reads_back:
            # No verify unless link_readbacks finds a later job that reads these blocks back.
            self.w.verify_later = entry
            self.w.verify_later_note = (
                f"{do} ({do.where}): fio writes verifiable blocks but reads none back in "
                "this job; iogate verifies in the job that writes: no verify here")
        elif self.never_writes() is not None:
            self.w.verify_reads = entry  # linked to its writer by link_readbacks
        else:
            self.w.keys["verify"] = entry
            self.int_key("verify_backlog")
            self.bool_key("verify_fatal")

    def _verify_state_options(self, verifies: bool) -> None:
        """The options on how fio keeps and reports verification state: kept in meaning,
        with what iogate does instead; without verify fio ignores them."""
        for name, meaning in VERIFY_STATE.items():
            src = self.opts.get(name)
            if src is None or (name in AT_DEFAULT and _default_value(src) in AT_DEFAULT[name]):
                continue  # left to _loose_ends: fio's default
            self.used.add(name)
            self.note(src, meaning if verifies else "no verify: fio ignores it")
        for name in ("verify_backlog", "verify_fatal", "verify_interval", "do_verify"):
            if name not in self.used and (src := self.get(name)) is not None:
                self.note(src, "no verify: fio ignores it")
        for name, reason in VERIFY_REFUSED.items():
            src = self.opts.get(name)
            if src is None or (name in AT_DEFAULT and _default_value(src) in AT_DEFAULT[name]):
                continue
            self.used.add(name)
            self.refuse(src, reason)

    # -- I/O priorities ----------------------------------------------------------------

    def _prio_value(self, text: str, hi: int) -> int:
        """One priority class (0-3) or level (0-7) as fio reads it."""
        t = text.strip()
        if not t.isdigit() or int(t) > hi:
            raise ValueProblem(f"'{shown(t)}' is not an integer from 0 to {hi}")
        return int(t)

    def _prio_directions(self, name: str, hi: int) -> None:
        """cmdprio_percentage, cmdprio_class, cmdprio: fio's read[,write] (trims have none)."""
        src = self.get(name)
        if src is None or (text := self.value(src)) is None:
            return
        if has_reference(text):
            self.put(name, suite_text(text), src)
            return
        try:
            parts = directions(text, "values")
            values = [self._prio_value(p, hi) if p else None for p in parts]
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        if values[0] == values[1]:
            self.put(name, values[0], src)
        else:
            self.put(name, {d: v for d, v in zip(("read", "write"), values, strict=True)
                            if v is not None}, src)

    def _cmdprio_bssplit(self) -> None:
        """fio's SIZE/PERCENT[/CLASS/LEVEL] entries, sizes in iogate's units."""
        src = self.get("cmdprio_bssplit")
        if src is None or (text := self.value(src)) is None:
            return
        try:
            out: list[str | None] = []
            for part in directions(text, "splits"):
                entries = []
                for entry in part.split(":") if part else ():
                    fields = [f.strip() for f in entry.split("/")]
                    if len(fields) == 5:
                        raise ValueProblem(
                            f"'{shown(entry)}': the form with a priority hint "
                            "(SIZE/PERCENT/CLASS/LEVEL/HINT, for command duration limits) "
                            "is newer than fio 3.33, which iogate follows")
                    if len(fields) not in (2, 4):
                        raise ValueProblem(f"'{shown(entry)}': write SIZE/PERCENT or "
                                           "SIZE/PERCENT/CLASS/LEVEL")
                    fields[0] = format_size_exact(fio_size(fields[0], self.kb_base))
                    entries.append("/".join(fields))
                out.append(":".join(entries) or None)
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        if out[0] == out[1]:
            self.put("cmdprio_bssplit", out[0], src)
        else:
            self.put("cmdprio_bssplit", {d: v for d, v in zip(("read", "write"), out,
                                                              strict=True) if v}, src)

    def _priorities(self) -> None:
        """prio and prioclass (the job's threads), and the command priorities of fio's
        io_uring and libaio engines: the suite keys of the same names."""
        for name, hi in (("prioclass", 3), ("prio", 7)):
            src = self.get(name)
            if src is None or (text := self.value(src)) is None:
                continue
            try:
                self.put(name, suite_text(text) if has_reference(text)
                         else self._prio_value(text, hi), src)
            except ValueProblem as exc:
                self.refuse(src, str(exc))
        names = ("cmdprio_percentage", "cmdprio_bssplit", "cmdprio_class", "cmdprio")
        given = [src for name in names if (src := self.opts.get(name)) is not None]
        engine = catalog.get(self.engine) if self.engine else None
        if given and engine is not None and not engine.cmdprio:
            for src in given:
                self.used.add(src.key)
                self.refuse(src, f"an option of fio's {catalog.spoken_where('cmdprio')} "
                            f"engines; this job's ioengine is {self.engine}")
            return
        percentage, split = self.opts.get("cmdprio_percentage"), self.opts.get("cmdprio_bssplit")
        if percentage is not None and split is not None:
            self.used.update(("cmdprio_percentage", "cmdprio_bssplit"))
            self.refuse(split, "cmdprio_percentage and cmdprio_bssplit exclude each other "
                        "(fio refuses both): keep one")
            return
        self._prio_directions("cmdprio_percentage", 100)
        self._prio_directions("cmdprio_class", 3)
        self._prio_directions("cmdprio", 7)
        self._cmdprio_bssplit()

    def _loose_ends(self) -> None:
        """Every option not converted above: noted, accepted at its default, or refused."""
        for name, src in self.opts.items():
            if name in self.used or name in ("name", "description", "wait_for", "stonewall",
                                             "exitall", "exit_what"):
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


def _times(n: int, value: Any, kind: str) -> int | str:
    """``n`` times a workload value (an int, a size as text, or an expression), exactly."""
    if isinstance(value, int):
        return format_size_exact(n * value) if kind == "size" else n * value
    try:
        return format_size_exact(n * parse_size(value)) if kind == "size" else n * int(value)
    except ValueError:
        return f"{n} * ({value})"


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
    for name in ("stonewall", "new_group"):  # the flags that place the job among others
        src = options.get(name)
        if src is not None:
            try:
                setattr(w, name, _flag(src))
            except ValueProblem as exc:
                problems.option(src, str(exc))
    w.wait_for = options.get("wait_for")
    w.exitall, w.exit_what = options.get("exitall"), options.get("exit_what")
    desc = options.get("description")
    if desc is not None and desc.section != "global" and desc.value:
        w.notes.insert(0, desc.value)
    job = _Job(problems, w, options, env)
    try:
        job.convert()
    except ValueProblem as exc:  # a value problem outside the steps' own handling
        problems.add(section.line, f"[{section.name}]", str(exc))
    if not job.clones:
        return [w]
    # One workload per fio clone, each on its own files or region; they run together.
    used_names.discard(w.name)
    clones = []
    for k, own in enumerate(job.clones):
        keys = {**w.keys, **own}
        clones.append(replace(w, name=_unique(f"{w.name}.{k}", used_names), keys=keys,
                              notes=list(w.notes), clone=k, stonewall=w.stonewall and k == 0,
                              new_group=w.new_group and k == 0))
    return clones


def link_readbacks(workloads: list[Workload]) -> None:
    """fio's read-back by a later job: a job that only reads with verify checks the blocks an
    earlier do_verify=0 job wrote to its files. iogate verifies in the job that writes, after
    its run, so the writer gets the verify and the reader reads unchecked, each with a
    comment. A reader with no such writer keeps its verify, which iogate's rules refuse."""
    for i, reader in enumerate(workloads):
        if reader.verify_reads is None:
            continue
        src = reader.verify_reads.src
        assert src is not None  # from an option of the job file
        files = reader.keys.get("filename")
        writer = next((w for w in reversed(workloads[:i]) if w.verify_later is not None
                       and files is not None and "filename" in w.keys
                       and w.keys["filename"].value == files.value), None)
        if writer is None or writer.verify_later is None:
            reader.keys["verify"] = reader.verify_reads
            continue
        later = writer.verify_later
        writer.keys["verify"] = Entry(later.value, later.src, "; ".join(filter(None, [
            later.comment, f"fio reads these blocks back in job [{reader.fio_name}] "
            "(do_verify=0 here); iogate reads them back at the end of this job"])))
        writer.verify_later = None
        reader.notes.append(f"{src} ({src.where}): fio checks here the blocks "
                            f"[{writer.fio_name}] wrote; iogate checked them at the end of "
                            f"{writer.name}: this job reads them unchecked")
    for w in workloads:
        if w.verify_later is not None:
            w.notes.append(w.verify_later_note)


def _unique(base: str, used_names: set[str]) -> str:
    """``base``, or ``base-N`` when taken, within iogate's name length; added to the set."""
    name, n = base[:NAME_MAX], 1
    while name in used_names:
        n += 1
        name = f"{base[:NAME_MAX - len(str(n)) - 1]}-{n}"
    used_names.add(name)
    return name
