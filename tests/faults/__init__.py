"""Fault injection for iogate's tests: make a "device" fail on purpose.

Tools (C sources beside this file, compiled on first use into a cache keyed by their hash):

- ``faultshim.c``, an LD_PRELOAD library: chosen pread/pwrite/read/write calls (and their
  vector variants) on files whose path contains a substring fail (EIO, ENOSPC), come back
  short, are torn, dropped, misdirected or stall. Only synchronous engines (psync, sync) and
  layout go through those calls; io_uring and libaio do not.
- ``faultfs.c``, a FUSE passthrough filesystem whose faults (EIO, ENOSPC, short, torn, drop,
  misdirect, stall, and stale: one 512-byte sector of a write left unwritten) are switched
  through a control file. Faults happen behind the kernel, so
  every engine sees them; killing the daemon makes the files vanish (ENOTCONN), SIGSTOP
  freezes them.

Use from any test module::

    from tests.faults import FaultFS, shim_env, tmpfs, run_python

    env = {**os.environ, **shim_env("data.bin", op="read", mode="eio", after=10, count=1)}
    with FaultFS() as fs:                     # skips without /dev/fuse, gcc or libfuse3-dev
        fs.control(mode="eio", op="read", after=5, count=3)
        ...  # I/O on files under fs.path (fs.backing is the same tree, fault free)
        fs.state()["faulted"]                 # how many requests were faulted so far
        fs.kill()                             # the device vanishes
    with tmpfs("4m") as d: ...                # root only: a small filesystem for ENOSPC
    run_python(code, arg, env=env, fsize=1 << 20)  # a child with RLIMIT_FSIZE, SIGXFSZ ignored

Good to know about faultfs (the kernel's FUSE client decides these):
- faults are counted per FUSE request; the kernel splits requests larger than 128 KiB;
- a short reply to an asynchronous write (io_uring, libaio) reaches the caller as EIO, a short
  read or a short pwrite(2) as a short count;
- when the daemon is killed, requests in flight fail with ECONNABORTED, later ones ENOTCONN,
  and close(2) of a file on it fails too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

OPS = ("read", "write", "both")
SHIM_MODES = ("eio", "enospc", "short", "torn", "drop", "misdirect", "stall")
FS_MODES = ("none", *SHIM_MODES, "stale")
MOUNT_TIMEOUT = 10.0  # seconds to wait for faultfs to appear


# -- building the tools ------------------------------------------------------------------

def cache_dir() -> Path:
    """Where compiled tools are kept: $IOGATE_FAULTS_CACHE, else a directory of this user's
    under /var/tmp (survives between runs; entries are keyed by source hash)."""
    explicit = os.environ.get("IOGATE_FAULTS_CACHE")
    if explicit:
        path = Path(explicit)
    else:
        parent = "/var/tmp" if os.access("/var/tmp", os.W_OK) else tempfile.gettempdir()
        path = Path(parent) / f"iogate-faults-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid != os.getuid():  # someone else's directory: do not trust it
        path = Path(tempfile.mkdtemp(prefix="iogate-faults-"))
    return path


def _compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler (gcc) to build the fault-injection tools")
    return cc


def _fuse_flags() -> list[str]:
    pkg = shutil.which("pkg-config")
    if pkg is None:
        pytest.skip("pkg-config is missing, needed to build faultfs (libfuse3-dev)")
    done = subprocess.run([pkg, "--cflags", "--libs", "fuse3"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("fuse3 development files are missing (apt-get install libfuse3-dev)")
    return done.stdout.split()


def build(name: str) -> Path:
    """The compiled tool `name` ("faultshim": the LD_PRELOAD library, "faultfs": the FUSE
    daemon), built with gcc on first use. Skips the test when the compiler or the fuse3
    headers are missing; a compile error is a failure."""
    if name == "faultshim":
        suffix, extra = ".so", ["-shared", "-fPIC", "-ldl", "-pthread"]
    elif name == "faultfs":
        suffix, extra = "", _fuse_flags()
    else:
        raise ValueError(f"unknown tool {name!r}; expected faultshim or faultfs")
    cc = _compiler()
    source = HERE / f"{name}.c"
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]
    key = hashlib.sha256(source.read_bytes() + " ".join([cc, *flags, *extra]).encode())
    out = cache_dir() / f"{name}-{key.hexdigest()[:16]}{suffix}"
    if out.exists():
        return out
    tmp = out.with_name(f".{out.name}.{os.getpid()}")
    done = subprocess.run([cc, *flags, "-o", str(tmp), str(source), *extra],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"building {source.name} failed:\n{done.stderr}")
    os.replace(tmp, out)  # atomic: a concurrent build of the same source is harmless
    return out


# -- skip helpers --------------------------------------------------------------------------

def require_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")


def require_fuse() -> None:
    """Skips unless FUSE filesystems can be mounted: /dev/fuse usable, and root or
    fusermount3."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("no /dev/fuse")
    if not os.access("/dev/fuse", os.R_OK | os.W_OK):
        pytest.skip("/dev/fuse is not accessible")
    if os.geteuid() != 0 and shutil.which("fusermount3") is None:
        pytest.skip("not root and no fusermount3 (package fuse3)")


# -- the LD_PRELOAD shim -----------------------------------------------------------------

def shim_env(path_substring: str, op: str, mode: str, after: int = 0, count: int = 0,
             stall_ms: int = 1000, shift: int | None = None) -> dict[str, str]:
    """Environment variables that load the shim into a child process and make it fault
    matching calls (see faultshim.c): `after` matching calls pass, then `count` are faulted
    (0: all the rest). Merge into the child's environment: {**os.environ, **shim_env(...)}.
    An LD_PRELOAD already set in this process is kept after the shim."""
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")
    if mode not in SHIM_MODES:
        raise ValueError(f"mode must be one of {SHIM_MODES}, got {mode!r}")
    if not path_substring:
        raise ValueError("path_substring must not be empty")
    preload = " ".join(p for p in (str(build("faultshim")), os.environ.get("LD_PRELOAD")) if p)
    env = {"LD_PRELOAD": preload, "IOGATE_FAULT_PATH": path_substring, "IOGATE_FAULT_OP": op,
           "IOGATE_FAULT_MODE": mode, "IOGATE_FAULT_AFTER": str(after),
           "IOGATE_FAULT_COUNT": str(count), "IOGATE_FAULT_STALL_MS": str(stall_ms)}
    if shift is not None:
        env["IOGATE_FAULT_SHIFT"] = str(shift)
    return env


# -- the FUSE filesystem -----------------------------------------------------------------

def mount_type(path: Path) -> str | None:
    """The filesystem type mounted exactly at `path`, or None."""
    want = str(path)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            # mount points escape space, tab, newline and backslash as octal
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
            if point == want:
                return fields[sep + 1]
    return None


def _all_stopped(pid: int) -> bool:
    """Whether every thread of process `pid` is stopped (state T)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:  # the thread exited
            continue
        if stat[stat.rindex(")") + 2] not in "Tt":  # the field after "(comm)"
            return False
    return True


def _unmount(path: Path, lazy: bool) -> bool:
    """Unmounts `path` (lazily: detached now, gone when no longer used); True on success."""
    if os.geteuid() == 0:
        cmd = ["umount", "-l", str(path)] if lazy else ["umount", str(path)]
    else:
        cmd = ["fusermount3", "-u", "-z", str(path)] if lazy else ["fusermount3", "-u", str(path)]
    if shutil.which(cmd[0]) is None:
        return False
    return subprocess.run(cmd, capture_output=True).returncode == 0 or mount_type(path) is None


class FaultFS:
    """A faultfs mount over a fresh backing directory, as a context manager.

    path: the mount point (files there go through the daemon and its faults);
    backing: the same files seen directly (to prepare or inspect them without faults).
    Entering skips the test when FUSE, gcc or libfuse3-dev is missing. Leaving unmounts
    (thawing or after a kill too) and removes both directories.
    """

    def __init__(self, base: str | os.PathLike[str] | None = None,
                 options: Sequence[str] = ()) -> None:
        self._base = base
        self._options = list(options)
        self._root: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._frozen = False

    @property
    def path(self) -> Path:
        assert self._root is not None, "FaultFS is not mounted"
        return self._root / "mnt"

    @property
    def backing(self) -> Path:
        assert self._root is not None, "FaultFS is not mounted"
        return self._root / "backing"

    @property
    def pid(self) -> int:
        assert self._proc is not None, "FaultFS is not mounted"
        return self._proc.pid

    @property
    def control_file(self) -> Path:
        return self.path / ".faultfs"

    def __enter__(self) -> FaultFS:
        require_fuse()
        exe = build("faultfs")
        self._root = Path(tempfile.mkdtemp(prefix="iogate-faultfs-", dir=self._base))
        self.backing.mkdir()
        self.path.mkdir()
        log = open(self._root / "faultfs.log", "w+b")  # the daemon writes to it
        try:
            self._proc = subprocess.Popen([str(exe), str(self.backing), str(self.path),
                                           *self._options], stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=log)
            deadline = time.monotonic() + MOUNT_TIMEOUT
            while not (mount_type(self.path) or "").startswith("fuse"):
                if self._proc.poll() is not None:
                    log.seek(0)
                    self._fail(f"faultfs exited ({self._proc.returncode}) before mounting: "
                               f"{log.read().decode(errors='replace').strip()}")
                if time.monotonic() > deadline:
                    self._fail(f"faultfs did not mount {self.path} within {MOUNT_TIMEOUT} s")
                time.sleep(0.01)
        finally:
            log.close()
        return self

    def _fail(self, message: str) -> None:
        self.close()
        if "not permitted" in message or "Permission denied" in message:
            pytest.skip(f"cannot mount a FUSE filesystem here: {message}")
        raise RuntimeError(message)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def control(self, mode: str = "none", op: str = "both", after: int = 0, count: int = 0,
                stall_ms: int = 1000, shift: int | None = None, sector: int = 0) -> None:
        """Sets the fault (replacing the previous one) and restarts the request numbering:
        of the requests of direction `op` on regular files, `after` pass, then `count` are
        faulted (0: all the rest). mode="none" turns faults off. mode="stale" writes all of
        a faulted write but its 512-byte sector number `sector`, which keeps its old bytes."""
        if mode not in FS_MODES:
            raise ValueError(f"mode must be one of {FS_MODES}, got {mode!r}")
        if op not in OPS:
            raise ValueError(f"op must be one of {OPS}, got {op!r}")
        line = (f"mode={mode} op={op} after={after} count={count} stall_ms={stall_ms} "
                f"sector={sector}")
        if shift is not None:
            line += f" shift={shift}"
        fd = os.open(self.control_file, os.O_WRONLY)
        try:
            os.write(fd, (line + "\n").encode())  # one write: one setting
        finally:
            os.close(fd)

    def state(self) -> dict[str, str | int]:
        """The current setting and counters: seen (requests of the selected direction since
        the last control) and faulted (those that were faulted), as ints."""
        text = self.control_file.read_text()
        out: dict[str, str | int] = {}
        for item in text.split():
            key, _, value = item.partition("=")
            out[key] = value if key in ("mode", "op") else int(value)
        return out

    def kill(self) -> None:
        """SIGKILLs the daemon: the mount stays, every later request fails (ENOTCONN)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._frozen = False

    def freeze(self) -> None:
        """SIGSTOPs the daemon: requests hang until thaw() (or until leaving)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGSTOP)
            self._frozen = True
            # The stop reaches the daemon's threads one by one; until all stopped, an idle
            # one could still serve a request.
            deadline = time.monotonic() + MOUNT_TIMEOUT
            while not _all_stopped(self._proc.pid):
                if time.monotonic() > deadline:
                    raise RuntimeError("faultfs did not stop on SIGSTOP")
                time.sleep(0.001)

    def thaw(self) -> None:
        if self._proc is not None and self._frozen:
            self._proc.send_signal(signal.SIGCONT)
            self._frozen = False

    def close(self) -> None:
        """Unmounts and cleans up; safe to call more than once and after kill()."""
        if self._root is None:
            return
        self.thaw()
        proc = self._proc
        if mount_type(self.path) is not None and not _unmount(self.path, lazy=False):
            _unmount(self.path, lazy=True)  # still in use (files open): detach it
        if proc is not None:
            try:
                proc.wait(timeout=MOUNT_TIMEOUT)  # the daemon exits once unmounted
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if mount_type(self.path) is None:
            shutil.rmtree(self._root, ignore_errors=True)
        self._root = None
        self._proc = None


# -- tmpfs, file size limits, child processes ---------------------------------------------

@contextlib.contextmanager
def tmpfs(size: int | str, base: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """A fresh tmpfs of `size` (bytes, or mount syntax such as "4m") mounted on a temporary
    directory; root only (skips otherwise). Unmounted (lazily if busy) on exit."""
    require_root()
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("mount/umount are missing")
    path = Path(tempfile.mkdtemp(prefix="iogate-tmpfs-", dir=base))
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700",
                           "iogate-faults", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        path.rmdir()
        pytest.skip(f"cannot mount tmpfs: {done.stderr.strip()}")
    try:
        yield path
    finally:
        if not _unmount(path, lazy=False):
            _unmount(path, lazy=True)
        with contextlib.suppress(OSError):
            path.rmdir()


def limit_file_size(nbytes: int) -> Callable[[], None]:
    """A preexec_fn: the child may not grow files past `nbytes` (RLIMIT_FSIZE, like
    `ulimit -f`), and ignores SIGXFSZ so that such writes fail with EFBIG instead of
    killing it."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return apply


def run_python(code: str, *args: str, env: dict[str, str] | None = None,
               timeout: float = 60.0, fsize: int | None = None,
               check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs `code` with this interpreter in a child process (argv[1:] = args), its output
    captured as text. env: the whole environment (default: this process's); fsize: a
    file size limit (limit_file_size). A child still running after `timeout` seconds is
    killed and the test fails (subprocess.TimeoutExpired)."""
    done = subprocess.run([sys.executable, "-c", code, *args],
                          env=dict(os.environ) if env is None else env, capture_output=True,
                          text=True, timeout=timeout,
                          preexec_fn=None if fsize is None else limit_file_size(fsize))
    if check and done.returncode != 0:
        raise AssertionError(f"child exited with {done.returncode}:\n{done.stderr}")
    return done
