"""Where in its target one fio job goes, as workload keys: size, filesize,
offset, offset_align and offset_increment (each clone's offset), the block sizes (bs,
bsrange, bssplit, blockalign) and how random offsets are drawn (random_distribution,
randseed, randrepeat, norandommap).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from iogate.expr import shown
from iogate.fio.job_state import Entry, JobState, bc_computes
from iogate.fio.jobfile import (
    Option,
    ValueProblem,
    directions,
    fio_size,
    has_reference,
    suite_text,
)
from iogate.spec.blocks import DEFAULT_BS
from iogate.spec.distributions import RandomDistribution
from iogate.units import format_size_exact


def _share(text: str) -> str | None:
    """fio's percentage of the file or device ('20%') as the suite writes it, or None."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*", text)
    return f"{m.group(1)}%" if m else None


_DISTRIBUTION: TypeAdapter[Any] = TypeAdapter(RandomDistribution)


# fio's bs=4k-512k: a number fio reads up to the '-', the rest left unread.
_BS_RANGE = re.compile(r"[0-9]+[A-Za-z]*-[0-9]+[A-Za-z]*")


class RegionOptions(JobState):
    """The region, its offsets and block sizes, and the random offsets over it."""

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

    def _one_file_opened_often(self, size: Option | None, filesize: Option | None) -> None:
        """fio's file names that name each file n times (see _files and _named_files): each
        of fio's opens is a region of its share of size (or filesize) from the file's start,
        and the job moves size over them; iogate's size is the total of one region per
        file."""
        n = self.entries_per_file
        moved: int | str | None = None
        if size is not None and (text := self.value(size)) is not None:
            moved = self.checked(size, text, "size")
            if moved is None:
                return
        per: int | str | None = None
        if filesize is not None and (text := self.value(filesize)) is not None:
            per = self.checked(filesize, text, "size")
            per = per * self.files if isinstance(per, int) else per
        elif isinstance(moved, int):
            per = moved // n
        where = filesize or size
        if where is None:
            return  # a template: its size comes when it runs
        if not isinstance(per, int) or (moved is not None and not isinstance(moved, int)):
            self.refuse(where, f"the job's {n} files are one file, whose size fio derives "
                        "from size and nrfiles: give size in bytes")
            return
        if per == 0:
            self.refuse(where, f"size/{n}: each of fio's {n} opens of the file has no bytes")
            return
        total = n * per if moved is None else min(moved, n * per) if filesize else moved
        self.put("size", self.size_text(per), where, f"a file's region is what each of fio's "
                 f"{n} opens of it covers" + (f", over {self.files} files" if self.files > 1
                                              else ""))
        if total != per:
            self.put("io_size", self.size_text(total), size or filesize,
                     f"what fio moves over its {n} opens of the file: over the region "
                     f"{total / per:g} times")

    def _sizes(self) -> None:
        size = self.get("size")
        # beside a size, filesize is compared with it: a variable is read as fio reads it
        filesize = self.get_literal("filesize") if size is not None else self.get("filesize")
        if filesize is not None and size is not None and bc_computes(size.value or ""):
            size = self.get_literal("size")  # fio has bc compute it when it reads the file
        offset = self.get("offset")
        size_value: int | str | None = None
        if self.entries_per_file > 1:
            self._one_file_opened_often(size, filesize)
            return
        if size is not None and (text := self.value(size)) is not None and _share(text):
            # A share of every file's size: the same meaning in iogate (plan.sized).
            self.put("size", _share(text), size)
        elif (size is not None and (text := self.value(size)) is not None
              and (size_value := self.checked(size, text, "size")) is None):
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
            if key == "bs" and any(_BS_RANGE.fullmatch(p) for p in parts):
                # fio reads a size up to the first '-' and leaves the rest unread
                self.note(src, f"fio reads {src.key}={text} as "
                          f"{','.join(p.split('-')[0] for p in parts)}: it stops at the '-'; "
                          "for a range of sizes write bsrange=" + text)
                parts = [p.split("-")[0] for p in parts]
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
        generator = self.get("random_generator")
        lfsr = generator is not None and generator.value == "lfsr"
        if generator is not None and lfsr:
            self.used.add("random_generator")
            self.note(generator, "fio's lfsr visits every block once per pass, with or "
                      "without norandommap: iogate's random map")
        if not lfsr:
            self.bool_key("norandommap")
        elif "norandommap" in self.opts:
            self.used.add("norandommap")
            self.note(self.opts["norandommap"], "lfsr needs no map: every block once per "
                      "pass all the same")
        if getattr(self.w.keys.get("norandommap"), "value", None) is False:
            del self.w.keys["norandommap"]  # fio's default and iogate's
        mapped = "norandommap" not in self.w.keys
        if mapped and random_rw and self.rw is not None and (
                "bssplit" in self.w.keys or "bsrange" in self.w.keys):
            self.w.notes.append(
                "with several block sizes fio's random map shortens requests to the "
                "untouched blocks left at an offset, so fio issues smaller requests and "
                "more of them than the split says (one bssplit job measured a mean read of "
                "4835 bytes with the map, 11528 with norandommap and in iogate); iogate "
                "draws such offsets on their own: sizes, IOPS and the number of requests "
                "differ; add norandommap to the fio job to compare them")

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
