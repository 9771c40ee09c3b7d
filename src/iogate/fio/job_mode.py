"""How one fio job issues its requests, as workload keys: kb_base (how its
sizes read), rw and its sequential skip, rwmixread/rwmixwrite, ioengine, iodepth and fio's
submission batching.
"""

from __future__ import annotations

import difflib

from iogate.engine import catalog
from iogate.expr import shown
from iogate.fio.job_state import JobState
from iogate.fio.jobfile import (
    Option,
    ValueProblem,
    has_reference,
    suite_text,
)
from iogate.fio.vocabulary import (
    FIO_DEFAULT_ENGINE,
    MODES,
    engine_for,
)
from iogate.spec.modes import MIXED
from iogate.units import format_size_exact

# fio's batching options (canonical names) and the suite key of each
_BATCH_KEYS = (("iodepth_batch", "iodepth_batch_submit"),
               ("iodepth_batch_complete_min", "iodepth_batch_complete_min"),
               ("iodepth_batch_complete_max", "iodepth_batch_complete_max"),
               ("iodepth_low", "iodepth_low"))


class ModeOptions(JobState):
    """kb_base, rw (and rw_sequencer), rwmix, ioengine, iodepth and batching."""

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

    def _iodepth(self) -> None:
        src = self.get("iodepth")
        if src is None:
            return
        ioengine = catalog.get(self.engine)
        if ioengine is not None and not ioengine.queued and src.value not in ("1", None):
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
        if low is not None and isinstance(low.value, int) and high is not None and \
                isinstance(high.value, int) and high.value < low.value:
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
