"""What one fio job writes and how it is checked, as workload keys: the shape
of the data (compressibility, patterns, zeroes, refills, dedupe, scrambling) and fio's
verify with its options (verify_pattern, verify_interval, do_verify and the options on
verification state), with the read-back by a later job left to
:func:`iogate.fio.translate.link_readbacks`.
"""

from __future__ import annotations

import re

from iogate.expr import shown
from iogate.fio.job_state import Entry, JobState, default_value, flag
from iogate.fio.jobfile import (
    Option,
    ValueProblem,
    fio_pattern,
    has_reference,
    suite_text,
)
from iogate.fio.vocabulary import (
    AT_DEFAULT,
    FIO_VERIFY_KINDS,
    VERIFY_REFUSED,
    VERIFY_STATE,
    VERIFY_WAY,
)
from iogate.spec.blocks import DEFAULT_BS
from iogate.units import format_size_exact


class DataOptions(JobState):
    """The data written, and verify."""

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
                reads_back = flag(do)
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
            if src is None or (name in AT_DEFAULT and default_value(src) in AT_DEFAULT[name]):
                continue  # left to _loose_ends: fio's default
            self.used.add(name)
            self.note(src, meaning if verifies else "no verify: fio ignores it")
        for name in ("verify_backlog", "verify_fatal", "verify_interval", "do_verify"):
            if name not in self.used and (src := self.get(name)) is not None:
                self.note(src, "no verify: fio ignores it")
        for name, reason in VERIFY_REFUSED.items():
            src = self.opts.get(name)
            if src is not None and name in AT_DEFAULT and has_reference(src.value or ""):
                src = self.get_literal(name)  # a variable: read as fio reads it
            if src is None or (name in AT_DEFAULT and default_value(src) in AT_DEFAULT[name]):
                continue
            self.used.add(name)
            self.refuse(src, reason)
