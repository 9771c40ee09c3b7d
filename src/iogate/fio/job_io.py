"""How one fio job's requests reach the device and become durable, as workload
keys: direct or buffered I/O, fsync and fdatasync, sync (O_SYNC, O_DSYNC), end_fsync and
fsync_on_close, the I/O priorities (prio, prioclass and the engines' cmdprio
options), the CPUs the threads run on and io_uring's fast paths.
"""

from __future__ import annotations

from iogate.engine import catalog
from iogate.engine.limits import CPUS_MAX
from iogate.expr import shown
from iogate.fio.job_state import Entry, JobState, flag
from iogate.fio.jobfile import (
    Option,
    ValueProblem,
    directions,
    fio_size,
    has_reference,
    suite_text,
)
from iogate.spec.fields import cpu_list, node_list, numa_mem_policy
from iogate.units import format_size_exact


def _set(src: Option) -> bool:
    """Whether a flag is set; False for a value fio does not take (refused where it is read)."""
    try:
        return flag(src)
    except ValueProblem:
        return False


class IoOptions(JobState):
    """direct/buffered, the syncs and the I/O priorities."""

    def _direct(self) -> None:
        direct, buffered = self.get_literal("direct"), self.get_literal("buffered")
        last = max((s for s in (direct, buffered) if s is not None),
                   key=lambda s: (s.section != "global", s.line), default=None)
        if last is None:
            return
        if last is buffered:
            if direct is not None:
                self.note(direct, "fio uses buffered, read later")
            try:
                self.put("direct", not flag(buffered), buffered, "fio's buffered=0 is "
                         "direct I/O" if not flag(buffered) else "")
            except ValueProblem as exc:
                self.refuse(buffered, str(exc))
            return
        if buffered is not None:
            self.note(buffered, "fio uses direct, read later")
        if self.engine == "mmap" and direct is not None and _set(direct):
            # fio opens the file O_DIRECT and maps it all the same: every access goes through
            # the page cache
            self.used.add("direct")
            self.note(direct, "fio's mmap engine maps the file whatever direct says, so its "
                      "blocks go through the page cache as iogate's mmap does: left out")
            return
        self.bool_key("direct")

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
        src = self.get_literal("sync")
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
                 if (src := self.get_literal(name)) is not None]
        on = []
        for src in given:
            try:
                if flag(src):
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

    def _placement(self) -> None:
        """cpus_allowed (or cpumask, a bitmask of the same) and cpus_allowed_policy: the
        CPUs the job's threads run on, the suite keys of the same names."""
        allowed, mask = self.get_literal("cpus_allowed"), self.get_literal("cpumask")
        src = max((s for s in (allowed, mask) if s is not None),
                  key=lambda s: (s.section != "global", s.line), default=None)
        policy = self.get_literal("cpus_allowed_policy")
        if src is None:
            if policy is not None:
                self.note(policy, "without cpus_allowed or cpumask fio pins nothing")
            return
        if (text := self.value(src)) is None:
            return
        try:
            if src is mask:
                bits = int(text, 0)
                if bits <= 0:
                    raise ValueError
                cpus = tuple(c for c in range(bits.bit_length()) if bits >> c & 1)
                text = ",".join(str(c) for c in cpus)
            else:
                cpus = cpu_list(text)
        except ValueError as exc:
            self.refuse(src, f"{src.key}={src.value}: " + (
                str(exc) if src is allowed else "fio's cpumask is a bitmask of CPUs, such as "
                "0xf for CPUs 0-3"))
            return
        if max(cpus) >= CPUS_MAX:
            self.refuse(src, f"{src.key}: CPU {max(cpus)}; iogate's CPUs are 0 to "
                        f"{CPUS_MAX - 1}")
            return
        other = mask if src is allowed else allowed
        if other is not None:
            self.note(other, f"fio uses {src.key} ({src.where}) instead")
        split = False
        if policy is not None and (kind := (self.value(policy) or "")) not in ("shared",
                                                                               "split"):
            self.refuse(policy, f"cpus_allowed_policy is shared or split, not "
                        f"'{shown(kind)}'")
            return
        if policy is not None:
            split = kind == "split"
        if split and self.clones:
            # fio gives clone k the k-th CPU of the set; here each clone is a workload of
            # its own, with one thread: its own CPU
            assert policy is not None
            for k, clone in enumerate(self.clones):
                clone["cpus_allowed"] = Entry(str(cpus[k % len(cpus)]), policy,
                                              f"fio's split: clone {k} on CPU "
                                              f"{cpus[k % len(cpus)]}" if k == 0 else "")
            return
        self.put("cpus_allowed", text, src, "fio's cpumask as a list" if src is mask else "")
        if split:
            self.put("cpus_allowed_policy", "split", policy,
                     "each thread on one CPU in turn; fio counts the threads over the whole "
                     "file, iogate each workload's from its first CPU")

    def _numa(self) -> None:
        """numa_cpu_nodes and numa_mem_policy: the suite keys of the same names."""
        src = self.get_literal("numa_cpu_nodes")
        if src is not None and (text := self.value(src)) is not None:
            if text.strip() == "all":
                self.note(src, "every node's CPUs: fio places the threads nowhere in "
                          "particular, nor does iogate")
            else:
                try:
                    node_list(text)
                except ValueError as exc:
                    self.refuse(src, f"numa_cpu_nodes: {exc}")
                else:
                    self.put("numa_cpu_nodes", text, src)
        src = self.get_literal("numa_mem_policy")
        if src is not None and (text := self.value(src)) is not None:
            try:
                numa_mem_policy(text)
            except ValueError as exc:
                self.refuse(src, f"numa_mem_policy: {exc}")
            else:
                self.put("numa_mem_policy", text, src)

    def _ring(self) -> None:
        """io_uring's fast paths: fixedbufs, registerfiles, sqthread_poll, sqthread_poll_cpu
        and hipri, the suite keys of the same names (the rules refuse them for another
        engine); nonvectored, how io_uring's requests are spelled."""
        for name in ("fixedbufs", "sqthread_poll", "hipri"):
            self.bool_key(name)
        src = self.get_literal("registerfiles")
        if src is not None:
            try:
                on = flag(src)
            except ValueProblem as exc:
                self.refuse(src, str(exc))
            else:
                self.put("registerfiles", on, src, "iogate's default" if on else "")
        if (src := self.get("sqthread_poll_cpu")) is not None and \
                (text := self.value(src)) is not None and \
                (cpu := self.checked(src, text, "count")) is not None:
            if isinstance(cpu, int) and cpu >= CPUS_MAX:
                self.refuse(src, f"sqthread_poll_cpu: CPU {cpu}; iogate's CPUs are 0 to "
                            f"{CPUS_MAX - 1}")
            else:
                self.put("sqthread_poll_cpu", cpu, src)
        src = self.get_literal("nonvectored")
        if src is not None:
            self.note(src, "iogate's io_uring requests are always non-vectored (READ and "
                      "WRITE, or READ_FIXED and WRITE_FIXED with fixedbufs): the same "
                      "transfers, one buffer each")

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
