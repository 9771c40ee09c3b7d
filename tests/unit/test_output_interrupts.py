"""An interrupt that comes while an output file is being made (the check before the run, a
temporary file filled and renamed, an entry of the ledger of iogate's files) leaves no file
of iogate's behind: it is taken once the temporary file is gone or in place, never between
its creation and its removal."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from iogate import files, interrupts, ownership


def interrupt_once_made(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Make every temporary file of iogate.files send SIGINT as soon as it exists: the
    moment where an interrupt that was let in would leave it behind."""
    made: list[Path] = []
    create: Callable[[Path, str, int], tuple[int, Path]] = files._create_temporary

    def created_then_interrupted(directory: Path, name: str, mode: int) -> tuple[int, Path]:
        fd, tmp = create(directory, name, mode)
        made.append(tmp)
        signal.raise_signal(signal.SIGINT)
        return fd, tmp

    monkeypatch.setattr(files, "_create_temporary", created_then_interrupted)
    return made


@pytest.mark.parametrize("output", ["check", "write"])
def test_an_interrupt_while_an_output_is_made_leaves_nothing_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str) -> None:
    made = interrupt_once_made(monkeypatch)
    target = tmp_path / "r.json"
    make: dict[str, Callable[[], object]] = {
        "check": lambda: files.check_output(target),  # the check before any work
        "write": lambda: files.write_whole(target, "{}")}
    with pytest.raises(KeyboardInterrupt), interrupts.handled():
        make[output]()
    assert len(made) == 1
    assert list(tmp_path.iterdir()) == []  # the interrupt came before anything was written


def test_an_interrupt_while_a_file_is_claimed_leaves_no_ledger_entry_half_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The ledger of the files iogate made writes each entry through a temporary one.
    state = tmp_path / "state"
    monkeypatch.setenv(ownership.STATE_ENV, str(state))
    made: list[str] = []
    real_open = os.open

    def opened_then_interrupted(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_open(path, flags, *args, **kwargs)
        if flags & os.O_EXCL:  # the temporary entry
            made.append(str(path))
            signal.raise_signal(signal.SIGINT)
        return fd

    target = tmp_path / "data"
    target.write_bytes(b"x")
    fd = real_open(target, os.O_RDONLY)
    monkeypatch.setattr(ownership.os, "open", opened_then_interrupted)
    try:
        with pytest.raises(KeyboardInterrupt), interrupts.handled():
            ownership.claim(fd, str(target))
    finally:
        os.close(fd)
    assert len(made) == 1
    assert [p.name for p in state.iterdir() if p.name.endswith(".tmp")] == []
