"""The files of one fio job, as workload keys: filename, directory, nrfiles
and filename_format (named as fio names them), openfiles and file_service_type, and numjobs:
a job whose clones fio gives files or a region of their own is one workload per clone.
"""

from __future__ import annotations

import re

from iogate.engine.limits import FILES_MAX
from iogate.expr import shown
from iogate.fio.job_state import Entry, JobState, flag
from iogate.fio.jobfile import (
    Option,
    ValueProblem,
    filename_list,
    fio_size,
    has_reference,
    suite_text,
)

_CLONES_MAX = 256  # workloads one job under directory may become, one per fio clone

# A drive letter (F:...) or a device namespace path (\\.\PhysicalDrive0, \\?\...).
_WINDOWS_PATH = re.compile(r"[A-Za-z]:|\\\\[.?]\\")

# fio's default file names, and the keywords filename_format takes.
_FILENAME_FORMAT = "$jobname.$jobnum.$filenum"
_FORMAT_KEYS = ("$jobname", "$jobnum", "$filenum")


class FileOptions(JobState):
    """numjobs (and the clones that become workloads), the files and how fio goes
    from one to the next."""

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
                # a workload per clone needs their number: the variable's, as fio reads it
                literal = self.get_literal("numjobs")
                if literal is None:
                    return  # refused: the variable is not set
                n = self.checked(literal, self.value(literal) or "", "count")
                if n is None:
                    return
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
        nrfiles = self.get_literal("nrfiles")
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
            if src.adds_up:
                self.note(src, "fio adds up the files of every filename= of the job: "
                          + ", ".join(f"{o.value} ({o.where})" for o in src.adds_up))
            times = {n: names.count(n) for n in names}
            if len(set(times.values())) > 1:
                self.refuse(src, "some files are named more often than others ("
                            + ", ".join(f"{shown(n)} {k}x" for n, k in times.items())
                            + "): fio would give each naming a region of its own; name each "
                            "file once")
                return
            if len(times) < len(names):
                # fio opens a file named n times n times, each a region of size/files
                self.entries_per_file = len(names) // len(times)
                self.note(src, f"each file is named {self.entries_per_file} times: fio opens "
                          f"it as often, each a region from its start; iogate's workload has "
                          f"it once, with the same amount moved over it")
                names = list(times)
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
            if nrfiles is not None and self.entries_per_file == 1:
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
        if count > 1 and len(set(names)) == 1:
            # without $filenum fio opens the one file count times, each open a region of
            # size/count from its start: one file of that size, moved over count times
            self.entries_per_file = count
            self.note(where, f"filename_format={fmt} names the {count} files of the job "
                      f"alike: fio opens {names[0].rsplit('/', 1)[-1]} {count} times, each a "
                      f"region of its size/{count} from the start; iogate's workload is that "
                      "one file, with the same amount moved over it")
            names = names[:1]
        elif len(set(names)) < len(names):
            self.refuse(where, f"filename_format={fmt} gives files of the job one name: add "
                        "$filenum")
            return []
        self.size_per_file = len(names) > 1
        for k, clone in enumerate(self.clones):
            files = list(dict.fromkeys(files_of(k)))
            clone["filename"] = Entry(files[0] if len(files) == 1 else files, where)
        if "/" in fmt:
            self.note(where, f"fio makes the directories filename_format={fmt} names when "
                      "they are missing; iogate makes none: make them before the run")
        first, last = (path.rsplit("/", 1)[-1] for path in (names[0], names[-1]))
        self.note(where, f"fio's file {'names' if len(names) > 1 else 'name'} for the job, "
                  f"{first}" + (f" to {last}" if len(names) > 1 else "")
                  + (" for its first clone, each clone its own" if self.clones else "")
                  + f" ({fmt}), in " + ("that directory" if directory is not None else
                                        "the working directory, where fio makes them too"))
        return names

    def _open_files(self, count: int) -> None:
        """fio's openfiles and file_service_type: how the job goes from file to file."""
        kind = "roundrobin"
        service = self.get("file_service_type")
        if service is not None and (text := self.value(service)) is not None:
            name, _, per = text.strip().partition(":")
            if name not in ("roundrobin", "random", "sequential") or per not in ("", "1"):
                self.refuse(service, f"file_service_type={text}: iogate goes from file to "
                            "file by roundrobin, random or sequential, one request at a time "
                            "(fio's ':1'); fio's zipf, pareto, normal and gauss choices of "
                            "files, and several requests per choice, are not kept")
                return
            kind = name
        src = self.get("openfiles")
        if src is not None and (text := self.value(src)) is not None:
            try:
                n = fio_size(text)
            except ValueProblem as exc:
                self.refuse(src, str(exc))
                return
            if n == 1 and count > 1:
                # fio opens one file, moves its share, closes it, opens the next: whatever
                # file_service_type says, it has one file to choose from
                self.note(src, f"openfiles=1 of {count} files: fio finishes a file before it "
                          "opens the next" + (", drawn at random among those left; iogate "
                                              "takes them in order" if kind == "random"
                                              else "") + ": file_service_type sequential")
                kind = "sequential"
            elif n and n < count:
                self.refuse(src, f"openfiles={n} of {count} files: fio keeps {n} open at a "
                            "time and opens the next as one is done; iogate keeps every file "
                            "of a workload open: remove it, or openfiles=1 (one file after "
                            "another)")
                return
            else:
                self.note(src, "iogate keeps every file of the workload open, as fio does "
                          "with this many")
        if kind != "roundrobin" and count > 1:
            self.put("file_service_type", kind, service or src)
        elif service is not None:
            self.note(service, "fio's default: the files in turn, one request each"
                      if kind == "roundrobin" else "one file: nothing to choose")

    def _write_layout(self) -> None:
        """overwrite and fallocate: how a job that only writes finds a file shorter than its
        region (fio's defaults, overwrite=0 and fallocate=native, are iogate's)."""
        self.bool_key("overwrite")
        if self.w.keys.get("overwrite", Entry(True, None)).value is False:
            self.w.keys.pop("overwrite")
        src = self.get("fallocate")
        on_open = self.get("create_on_open")
        if on_open is not None:
            self._create_on_open(on_open)
            if "fallocate" in self.w.keys:
                if src is not None:
                    self.note(src, "create_on_open=1: the file is made when the job opens "
                              "it, never allocated first")
                return
        if src is None or (text := self.value(src)) is None:
            return
        value = {"0": "none", "1": "posix"}.get(text, text)
        if value not in ("native", "posix", "keep", "truncate", "none"):
            self.refuse(src, f"fio's fallocate is none, native, posix, keep, truncate, 0 or "
                        f"1, not '{shown(text)}'")
        elif value != "native":
            self.put("fallocate", value, src)

    def _create_on_open(self, src: Option) -> None:
        """fio's create_on_open=1: no file is made before the run; the job's open creates it
        empty. A job that only writes then writes into a file that grows as it is written
        (fallocate none); one that reads has its file laid out first all the same."""
        try:
            on = flag(src)
        except ValueProblem as exc:
            self.refuse(src, str(exc))
            return
        if not on:
            self.note(src, "fio's default")
        elif self.rw in ("write", "randwrite"):
            self.put("fallocate", "none", src, "fio's create_on_open=1: the job's open "
                     "creates the file empty and it grows as it is written")
        else:
            self.note(src, "fio creates a missing file when the job opens it; as this job "
                      "reads, iogate lays the file out before the run")
