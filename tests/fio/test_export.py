"""`iogate export`: a suite as a fio job file that fio accepts and runs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from iogate.cli import main
from iogate.errors import SuiteError
from iogate.fio.exporter import export, export_suite
from iogate.fio.options import FORBIDDEN
from iogate.spec import load_suite

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(REPO.glob("suites/**/*.suite.yaml"))
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def write_suite(tmp_path: Path, body: str, name: str = "t.suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def sections(text: str) -> list[tuple[str, list[str]]]:
    """(name, option lines) of each section, comments left out."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if not line or line.startswith(";"):
            continue
        if line.startswith("["):
            out.append((line[1:-1], []))
        else:
            out[-1][1].append(line)
    return out


def fio_parse_only(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["fio", "--parse-only", "--debug=parse", str(path)],
                          capture_output=True, text=True, timeout=60)


# Once a section gives one of io_uring's own options, fio sets the others' defaults, which
# its parse log shows like options read.
IO_URING_DEFAULTS = ("nonvectored=-1", "cmd_type=nvme")


def as_fio_read_them(debug: str) -> list[tuple[str, list[str]]]:
    """Sections and options from fio's parse log, in our notation (flags bare), without the
    defaults fio sets itself."""
    out: list[tuple[str, list[str]]] = []
    for line in debug.splitlines():
        if "Parsing section [" in line:
            out.append((line.split("Parsing section [", 1)[1][:-1], []))
        elif " handle_option=" in line:
            key, value = line.split(" handle_option=", 1)[1].split(", ptr=", 1)
            out[-1][1].append(key if value == "(null)" else f"{key}={value}")
    return [(name, sorted(o for o in options if o not in IO_URING_DEFAULTS
                          or "ioengine=io_uring" not in options))
            for name, options in out]


def test_the_shipped_suites_are_all_there() -> None:
    names = {p.name for p in SHIPPED}
    assert "smoke.suite.yaml" in names
    assert "hot-spot.suite.yaml" in names  # field-notes too


@needs_fio
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_suite_exports_and_fio_accepts_it(path: Path, tmp_path: Path) -> None:
    suite = load_suite(path)
    result = export(suite)
    # Power-loss verification has no fio counterpart; every other case exports.
    assert [cid for cid, _ in result.skipped] == [c.id for c in suite.cases
                                                  if c.workload.verify_state]
    assert all("verify_state (fio records no" in why for _, why in result.skipped)
    exported = [c for c in suite.cases if not c.workload.verify_state]
    assert result.cases == [c.id for c in exported]
    steps = sum(len(c.preconditions) for c in exported)
    assert len(sections(result.text)) == len(exported) + steps
    job = tmp_path / f"{suite.name}.fio"
    job.write_text(result.text)
    checked = fio_parse_only(job)
    assert checked.returncode == 0, checked.stderr
    log = checked.stdout + checked.stderr
    assert [line for line in log.splitlines() if line.startswith("fio:")] \
        == ["fio: set debug option parse"]  # no warning
    # fio read every option whole, with nothing cut, expanded or added.
    assert as_fio_read_them(log) == [
        (name, sorted(options)) for name, options in sections(result.text)]


GROUPED = """\
suite: grouped
defaults: {size: 1MiB, ioengine: null, runtime: 500ms, time_based: true}
workloads:
  - name: first
    rw: randread
    iodepth: 4
    repeat: 3
    precondition:
      - {rw: write, bs: 64k, loops: 2}
    expect:
      read.clat.p99: "<= 1.2ms"
      read.iops: [">= 1k", "<= 10M"]
  - name: reader
    group: pair
    rw: randread
    expect: {errors: "== 0"}
  - name: writer
    group: pair
    rw: randwrite
    bs: 8k
    precondition: [{rw: write}]
  - name: swept
    rw: read
    sweep: {bs: [4k, 64k]}
"""


def test_sections_follow_the_run_order_with_stonewalls(tmp_path: Path) -> None:
    text = export_suite(load_suite(write_suite(tmp_path, GROUPED)))
    got = sections(text)
    # A group's precondition steps run before the group, which runs together: only its
    # first job waits for the jobs before it.
    assert [name for name, _ in got] == ["first.pre1", "first", "writer.pre1", "reader",
                                         "writer", "swept(bs=4k)", "swept(bs=64k)"]
    walls = {name: "stonewall" in lines for name, lines in got}
    assert walls == {"first.pre1": True, "first": True, "writer.pre1": True, "reader": True,
                     "writer": False, "swept(bs=4k)": True, "swept(bs=64k)": True}
    options = dict(got)
    assert "loops=2" in options["first.pre1"]
    assert "rw=write" in options["first.pre1"]
    assert "bs=65536" in options["first.pre1"]
    assert "size=1048576" in options["first.pre1"]
    assert "bs=8192" in options["writer"]
    assert "bs=65536" in options["swept(bs=64k)"]
    assert "runtime=500ms" in options["first"]


def test_expectations_and_repeats_are_comments(tmp_path: Path) -> None:
    text = export_suite(load_suite(write_suite(tmp_path, GROUPED)))
    comments = [line for line in text.splitlines() if line.startswith(";")]
    assert "; expect read.clat.p99 <= 1.2ms" in comments
    assert "; expect read.iops >= 1k" in comments
    assert "; expect read.iops <= 10M" in comments
    assert "; expect errors == 0" in comments
    assert any(line.startswith("; repeat 3: iogate runs this case 3 times") for line in comments)
    assert any("group pair: runs together with writer" in line for line in comments)
    assert comments[0].startswith("; fio job file generated by iogate export ")
    assert "t.suite.yaml" in comments[0]


def test_the_filename_is_the_suites_the_override_or_a_placeholder(tmp_path: Path) -> None:
    body = """\
suite: files
defaults: {size: 1MiB, rw: read}
workloads:
  - {name: given, filename: "/data/a:b"}
  - {name: temporary}
  - {name: nothing-to-open, ioengine: null}
"""
    suite = load_suite(write_suite(tmp_path, body))
    options = dict(sections(export_suite(suite)))
    assert "filename=/data/a\\:b" in options["given"]
    placeholder = [o for o in options["temporary"] if o.startswith("filename=")]
    assert placeholder
    assert placeholder[0].endswith("/iogate-temporary.data")
    assert not any(o.startswith("filename=") for o in options["nothing-to-open"])
    assert "; no filename in the suite: iogate runs on a temporary file" in export_suite(suite)
    overridden = dict(sections(export_suite(suite, filename_override="/dev/nvme0n1")))
    assert "filename=/dev/nvme0n1" in overridden["given"]
    assert "filename=/dev/nvme0n1" in overridden["temporary"]


def test_a_case_fio_cannot_run_is_named_not_written(tmp_path: Path) -> None:
    body = """\
suite: partial
defaults: {size: 1MiB, rw: write, bs: 4k}
workloads:
  - {name: fine}
  - {name: xxh, verify: xxhash}
  - {name: with-timeout, io_timeout: 2s}
  - {name: a, group: g, rw: read}
  - {name: b, group: g, random_distribution: "normal:10", rw: randread}
"""
    result = export(load_suite(write_suite(tmp_path, body)))
    assert result.cases == ["fine"]
    skipped = dict(result.skipped)
    assert "XXH32" in skipped["xxh"]
    assert "io_timeout" in skipped["with-timeout"]
    # A group runs whole or not at all: its cases load the device together.
    assert "group 'g'" in skipped["a"]
    assert "normal" in skipped["b"]
    assert [name for name, _ in sections(result.text)] == ["fine"]
    assert "; Not exported (fio would run them differently):" in result.text


@pytest.mark.parametrize("key", ["exec_prerun", "exec_postrun", "include"])
def test_a_suite_cannot_ask_for_a_forbidden_option(tmp_path: Path, key: str) -> None:
    body = f"""\
suite: hostile
workloads:
  - {{name: w, rw: read, size: 1MiB, {key}: "touch /tmp/iogate-pwned"}}
"""
    with pytest.raises(SuiteError):
        load_suite(write_suite(tmp_path, body))


@pytest.mark.parametrize("engine", ["exec", "external:/tmp/evil.so", "/tmp/evil.so"])
def test_a_suite_cannot_ask_for_another_engine(tmp_path: Path, engine: str) -> None:
    body = f"""\
suite: hostile
workloads:
  - {{name: w, rw: read, size: 1MiB, ioengine: "{engine}"}}
"""
    with pytest.raises(SuiteError):
        load_suite(write_suite(tmp_path, body))


HOSTILE_NAMES = [
    "/tmp/x\\n[global]\\nexec_prerun=touch /tmp/iogate-pwned",
    "/tmp/x\\rexec_prerun=touch /tmp/iogate-pwned",
    "/tmp/x;exec_prerun=touch /tmp/iogate-pwned",
    "/tmp/x\\u2028include /etc/passwd",
    "/tmp/$${HOME}",  # iogate reads $$ as a literal '$': fio would expand what follows
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_file_names_are_refused_never_written(tmp_path: Path, name: str) -> None:
    body = f"""\
suite: hostile
workloads:
  - {{name: ok, rw: read, size: 1MiB, filename: /tmp/fine}}
  - {{name: evil, rw: read, size: 1MiB, filename: "{name}"}}
"""
    result = export(load_suite(write_suite(tmp_path, body)))
    assert result.cases == ["ok"]
    assert [c for c, _ in result.skipped] == ["evil"]
    assert_harmless(result.text)


def test_a_pattern_is_written_in_hex_whatever_it_holds(tmp_path: Path) -> None:
    body = """\
suite: pattern
workloads:
  - {name: w, rw: write, size: 1MiB, buffer_pattern: "abc;exec_prerun=x\\n[global]'"}
"""
    text = export_suite(load_suite(write_suite(tmp_path, body)))
    pattern = b"abc;exec_prerun=x\n[global]'".hex()
    assert f"buffer_pattern=0x{pattern}" in dict(sections(text))["w"]
    assert_harmless(text)


def test_hostile_sweep_values_make_safe_section_names(tmp_path: Path) -> None:
    body = """\
suite: hostile
workloads:
  - name: global
    rw: read
    size: 1MiB
    filename: /tmp/f-${tag}
    sweep: {tag: ["a]b", "[global]", "x y"]}
"""
    result = export(load_suite(write_suite(tmp_path, body)))
    names = [name for name, _ in sections(result.text)]
    assert len(names) == 3
    assert len(set(names)) == 3
    assert all(n.startswith("job-global(") for n in names)
    assert_harmless(result.text)


def assert_harmless(text: str) -> None:
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        key = stripped.partition("=")[0]
        assert key not in FORBIDDEN, line
        assert not key.lower().startswith("include"), line
        assert not stripped.lower().startswith("[global"), line
        assert "$" not in stripped, line
        assert "\r" not in line, line


def test_the_cli_writes_the_file_and_selects_cases(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    suite = write_suite(tmp_path, GROUPED)
    out = tmp_path / "out.fio"
    assert main(["export", str(suite), "-o", str(out), "-k", "swept"]) == 0
    assert [name for name, _ in sections(out.read_text())] == ["swept(bs=4k)", "swept(bs=64k)"]
    assert "out.fio: 2 case(s)" in capsys.readouterr().err
    assert main(["export", str(suite), "-k", "first"]) == 0
    assert [name for name, _ in sections(capsys.readouterr().out)] == ["first.pre1", "first"]
    assert main(["export", str(suite), "-k", "nothing"]) == 2
    assert "no case matches" in capsys.readouterr().err


def test_the_cli_names_what_it_leaves_out(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    body = """\
suite: partial
defaults: {size: 1MiB, rw: write}
workloads:
  - {name: fine}
  - {name: xxh, verify: xxhash}
"""
    suite = write_suite(tmp_path, body)
    assert main(["export", str(suite)]) == 0
    captured = capsys.readouterr()
    assert "t.suite.yaml::xxh: not exported: verify xxhash" in captured.err
    assert main(["export", str(suite), "-k", "xxh", "-o", str(tmp_path / "none.fio")]) == 2
    assert not (tmp_path / "none.fio").exists()
    assert "no case of" in capsys.readouterr().err


def test_the_cli_refuses_an_invalid_suite(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    body = "suite: bad\nworkloads:\n  - {name: w, rw: read, size: 1MiB, exec_prerun: x}\n"
    out = tmp_path / "bad.fio"
    assert main(["export", str(write_suite(tmp_path, body)), "-o", str(out)]) == 2
    assert "exec_prerun" in capsys.readouterr().err
    assert not out.exists()


@needs_fio
def test_fio_runs_an_exported_null_engine_job(tmp_path: Path) -> None:
    body = """\
suite: runs
workloads:
  - name: null-mix
    ioengine: null
    rw: randrw
    rwmixread: 70
    bs: {read: 4k, write: 16k}
    iodepth: 4
    size: 16MiB
    runtime: 300ms
    time_based: true
    rate_iops: {read: 700, write: 300}
    expect: {read.iops: ">= 600"}
"""
    job = tmp_path / "runs.fio"
    job.write_text(export_suite(load_suite(write_suite(tmp_path, body))))
    out = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout[out.stdout.index("{"):])
    [result] = document["jobs"]
    assert result["jobname"] == "null-mix"
    assert result["error"] == 0
    parsed = result["job options"]
    assert (parsed["rw"], parsed["bs"], parsed["rwmixread"]) == ("randrw", "4096,16384", "70")
    assert (parsed["rate_iops"], parsed["runtime"]) == ("700,300", "300ms")
    # fio honours each direction's rate: 0.3 s at 700 and 300 IOPS.
    assert 150 <= result["read"]["total_ios"] <= 260
    assert 60 <= result["write"]["total_ios"] <= 110
