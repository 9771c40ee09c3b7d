"""The validated shape of a suite: strict pydantic models of jobs, workloads and files.

:class:`JobFields` is the table of job keys (:class:`iogate.spec.keys.JobKeys`) checked
against the rules between them; :class:`Workload` adds a name, a group,
expectations, repeats, ``fail_fast`` and :class:`SteadyState`; :class:`PreconditionStep`
adds ``loops``. :class:`Defaults`, :class:`WorkloadEntry` and :class:`PreconditionEntry` are
the same keys as written, where any may be missing. :class:`SuiteFile` is a whole file.

Field types are :mod:`iogate.spec.fields`'s and its families'; a job is checked against
the rules between its fields (:func:`iogate.spec.rules.workload_rules`) as it is validated.
Numeric fields also take arithmetic (:mod:`iogate.expr`): ``numjobs: ${ncpus} * 2``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    WithJsonSchema,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from iogate.metrics import describe, key_patterns, parse_metric, standard_paths
from iogate.spec.blocks import BS_KEYS, DEFAULT_BS
from iogate.spec.fields import (
    STRICT,
    AtLeastOne,
    Description,
    Duration,
    Integer,
    Name,
    OutputPath,
    PositiveDuration,
    PositiveNumber,
    SteadyMetric,
)
from iogate.spec.keys import JobKeys
from iogate.spec.modes import RwMode, is_mixed
from iogate.spec.rules import workload_rules
from iogate.units import format_size_exact

# What a model validated itself adds to the job keys' config: it is built at import, while
# interrupts are held (iogate.interrupts), not when it first validates.
BUILT = ConfigDict(defer_build=False)
WITHOUT_RULES = "without_rules"  # validation context: leave the rules between fields out


class JobFields(JobKeys):
    """A job's keys (:class:`iogate.spec.keys.JobKeys`) checked against the rules between them
    (:func:`iogate.spec.rules.workload_rules`) as they are validated."""

    @model_validator(mode="before")
    @classmethod
    def _mixed_default(cls, data: Any) -> Any:
        # Mixed workloads read half the time unless told otherwise, like fio;
        # rwmixwrite alone says the same thing from the other side.
        if isinstance(data, Mapping) and is_mixed(data.get("rw")) and "rwmixread" not in data:
            write = data.get("rwmixwrite")
            read = 100 - write if isinstance(write, int) and not isinstance(write, bool) \
                and 0 <= write <= 100 else 50
            data = {**data, "rwmixread": read}
        return data

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> JobFields:
        if info.context and info.context.get(WITHOUT_RULES):
            return self  # the caller checks them itself (iogate.spec.suite)
        rules = list(workload_rules(self))
        if rules:
            raise PydanticCustomError("workload_rules", "{summary}", {
                "summary": "; ".join(m for _, m in rules), "rules": rules})
        return self


# Keys that are not a job's, described once for every model that has them.
ABOUT = {
    "name": "the workload's name, [A-Za-z0-9_.-], at most 128 characters, unique in the "
            "suite; with its sweep point, the case's test id",
    "group": "workloads sharing a group run together, at the place of the group's first "
             "(fio's new_group); others run alone, one after another (fio's stonewall)",
    "repeat": "runs of the case (a group runs together N times); expectations judge the "
              "median of each metric unless they name another statistic (read.iops@min); "
              "{min: N, max: M}: N runs, then more until every check against a baseline or "
              "the history is decided, at most M",
    "fail_fast": "stop a time-based case as soon as one of its windowed expectations can no "
                 "longer be met, keeping what was measured",
    "steady_state": "measure in rounds until a window of them is steady (SNIA PTS), then "
                    "judge the last window",
    "precondition": "steps run before the workload, not measured: each a mapping of "
                    "workload keys with rw required; filename, size, offset, ioengine, "
                    "direct and the block size come from the workload unless set",
    "loops": "passes over the region (default 1)",
    "step_rw": "what the step does (required), e.g. write to fill the region",
}


# Runs of a case at most: as many as the points of a sweep (iogate.spec.sweep), each run's
# measurements being kept until the case is judged.
MAX_REPEAT = 10_000
Runs = Annotated[Integer, Field(ge=1, le=MAX_REPEAT)]


class RepeatRange(BaseModel):
    """Adaptive repeats: at least ``min`` runs, then one more at a time until every check
    against a baseline or the history is decided at the run's significance, at most
    ``max``."""

    model_config = STRICT
    min: Runs = Field(description="runs made before any check is judged, at least 1")
    max: Runs = Field(description=f"runs made at most, at least min (at most {MAX_REPEAT})")

    @model_validator(mode="after")
    def _ordered(self) -> RepeatRange:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min}): write max >= min")
        return self

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A fixed number of runs is written as the number."""
        return self.min if self.min == self.max else handler(self)


def _repeat_range(value: Any) -> Any:
    """A number of runs is the range from it to itself; a mapping is checked as written."""
    if isinstance(value, (Mapping, BaseModel)):
        return value
    return {"min": value, "max": value}


Repeat = Annotated[RepeatRange, BeforeValidator(_repeat_range), WithJsonSchema({
    "anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_REPEAT}, {"type": "string"},
              {"type": "object", "additionalProperties": False, "required": ["min", "max"],
               "properties": {"min": {"type": ["integer", "string"]},
                              "max": {"type": ["integer", "string"]}}}],
    "description": "runs of the case: N, or {min: N, max: M} for adaptive repeats"})]


class SteadyState(BaseModel):
    """Measurement rounds until a window of them is steady (SNIA PTS): the tracked metric's
    range within ``range_pct`` of the window mean and its least-squares slope across the
    window within ``slope_pct`` of the mean (each limit set to null is not asked; a
    ``deviation_pct`` asks every round to be that close to the mean, fio's rule), in at
    most ``max_rounds`` rounds; rounds that start within ``ramp`` are in no window."""

    model_config = STRICT
    metric: SteadyMetric = Field(description=(
        "the metric tracked round by round, e.g. write.iops, total.bw, read.clat.p99"))
    round: PositiveDuration = Field(default=60 * 10**9, description=(
        "length of one measurement round (a duration: 60s)"), json_schema_extra={
        "default": "60s"})
    window: Annotated[Integer, Field(ge=2)] = Field(default=5, description=(
        "rounds judged together, at least 2"))
    ramp: Duration = Field(default=0, description=(
        "rounds starting within this long after the first are in no window (a duration)"))
    max_rounds: AtLeastOne = Field(default=25, description=(
        "rounds run at most before the workload is judged unsteady"))
    range_pct: PositiveNumber | None = Field(default=20.0, description=(
        "the window's range (max - min) at most this percent of its mean; null: not asked"))
    slope_pct: PositiveNumber | None = Field(default=10.0, description=(
        "the least-squares slope across the window at most this percent of its mean; "
        "null: not asked"))
    deviation_pct: PositiveNumber | None = Field(default=None, description=(
        "every round within this percent of the window's mean (fio's steady state)"))
    on_unsteady: Literal["fail", "skip"] = Field(default="fail", description=(
        "what an unsteady workload is: fail, or skip (not judged)"))

    @property
    def ramp_rounds(self) -> int:
        """Rounds run before any window may start: those that start within ``ramp``."""
        return -(-self.ramp // self.round)

    @field_validator("max_rounds")
    @classmethod
    def _room_for_a_window(cls, value: int, info: ValidationInfo) -> int:
        window, ramp, round_ = (info.data.get(k) for k in ("window", "ramp", "round"))
        if not isinstance(window, int):
            return value
        skip = -(-ramp // round_) if isinstance(ramp, int) and isinstance(round_, int) else 0
        if value < skip + window:
            ramp_text = f"{skip} ramp rounds and " if skip else ""
            raise ValueError(f"max_rounds ({value}) must be at least {ramp_text}the window "
                             f"({window} rounds), or steady state could never be judged")
        return value

    @model_validator(mode="after")
    def _a_limit(self) -> SteadyState:
        if self.range_pct is None and self.slope_pct is None and self.deviation_pct is None:
            raise ValueError("steady state needs a limit: range_pct, slope_pct or "
                             "deviation_pct")
        return self


EXITALL_DESCRIPTION = (
    "when a thread of this workload ends its run (its size, io_size, number_ios or runtime "
    "reached), stop others as if their runtime had run out (fio's exitall): true stops every "
    "workload of its group (and its own other threads), a list stops the named workloads of "
    "its group (itself may be named); a workload stopped this way still runs its end_fsync "
    "and verify and passes or fails on what it did")
ExitAll = bool | Annotated[list[Name], Field(min_length=1)]
VERIFY_STATE_DESCRIPTION = (
    "power-loss verification: a file where the verified write workload records, as it runs, "
    "every write that completed and every fsync or fdatasync (fsync: N, fdatasync: N, "
    "end_fsync) that made them durable (with sync: dsync or sync, each write itself); "
    "after a crash, a power cut or a device reset, 'iogate verify SUITE' reads the target "
    "back against it and tells blocks lost after a completed sync from blocks not yet "
    "durable. Needs verify and a filename; each workload "
    "(and sweep point) its own file, best on another filesystem than the target; a relative "
    "path is from the working directory; replaced at every run")
EXIT_MASK_JOBS = 64  # an exitall list is a mask of 64 bits over the jobs of one session


class Workload(JobFields):
    """One validated workload, defaults merged."""

    model_config = BUILT
    name: Name = Field(description=ABOUT["name"])
    group: Name | None = Field(default=None, description=ABOUT["group"])
    exitall: ExitAll = False
    verify_state: OutputPath | None = None
    expect: dict[str, Any] = Field(default_factory=dict)
    per_host: dict[str, Any] = Field(default_factory=dict)
    repeat: Repeat = Field(default=RepeatRange(min=1, max=1), description=ABOUT["repeat"])
    fail_fast: bool = Field(default=False, description=ABOUT["fail_fast"])
    steady_state: SteadyState | None = Field(default=None, description=ABOUT["steady_state"])


class PreconditionStep(JobFields):
    """A step run before its workload, not measured; ``loops`` passes over the region."""

    model_config = BUILT
    rw: RwMode  # required: a step says what it does
    loops: AtLeastOne = Field(default=1, description=ABOUT["loops"])


# Keys a precondition step takes from its workload unless it sets them itself.
STEP_INHERITS = ("filename", "size", "offset", "ioengine", "direct", "allow_overwrite",
                 "target_root", *BS_KEYS)
# Keys of which setting one replaces the others coming from further out.
EXCLUSIVE_GROUPS = (frozenset(BS_KEYS), frozenset(("rwmixread", "rwmixwrite")),
                    frozenset(("cmdprio_percentage", "cmdprio_bssplit")))


def written_defaults() -> dict[str, Any]:
    """What a workload gets for each key missing everywhere, as a suite would write it,
    for the keys whose default is a plain value (``None``, meaning "not set", is left out).
    Every quantity with a unit defaults to 0, the same in any unit."""
    out: dict[str, Any] = {"bs": format_size_exact(DEFAULT_BS)}
    for key, info in Workload.model_fields.items():
        value = info.get_default(call_default_factory=True)
        if isinstance(value, (bool, str, int)):
            out[key] = value
    return out


def _as_written(name: str, doc: str, **own: Any) -> type[BaseModel]:
    """A model of the same keys as JobFields as written in a file, where every key may be
    missing (it comes from further out), plus the model's `own` fields."""
    fields: dict[str, Any] = {}
    for key, info in JobFields.model_fields.items():
        annotation: Any = info.annotation
        if info.metadata:
            args = (annotation, *info.metadata)
            annotation = Annotated[args]
        fields[key] = (Optional[annotation], Field(  # noqa: UP045 - built at run time
            default=None, description=info.description, json_schema_extra=info.json_schema_extra))
    fields.update(own)
    model: type[BaseModel] = create_model(name, __config__=STRICT, __doc__=doc, **fields)
    model.__module__ = __name__
    return model


if TYPE_CHECKING:  # the checker sees plain models; they are built below at run time
    class PreconditionEntry(BaseModel): ...

    class Defaults(BaseModel): ...
else:
    PreconditionEntry = _as_written(
        "PreconditionEntry",
        "A precondition step as written: ``rw`` and any job key, inherited ones included.",
        rw=(RwMode, Field(description=ABOUT["step_rw"])),
        loops=(Optional[AtLeastOne], Field(None, description=ABOUT["loops"])))  # noqa: UP045
    Defaults = _as_written(
        "Defaults",
        "Values every workload of the suite starts from; a workload's own keys win.",
        group=(Optional[Name], Field(None, description=ABOUT["group"])),  # noqa: UP045
        repeat=(Optional[Repeat], Field(None, description=ABOUT["repeat"])),  # noqa: UP045
        precondition=(Optional[list[PreconditionEntry]],  # noqa: UP045
                      Field(None, description=ABOUT["precondition"])))


SWEEP_VALUE_SCHEMA = {"type": ["string", "integer", "number", "boolean"]}
SWEEP_SCHEMA = {
    "anyOf": [
        {"type": "object", "minProperties": 1,
         "additionalProperties": {"type": "array", "items": SWEEP_VALUE_SCHEMA, "minItems": 1},
         "description": "variable -> values; every combination is a point, in the order "
                        "written"},
        {"type": "array", "minItems": 1,
         "items": {"type": "object", "minProperties": 1,
                   "additionalProperties": SWEEP_VALUE_SCHEMA},
         "description": "explicit points, each a mapping of the same variables"},
    ],
    "description": "run the workload once per point; a variable is used as ${name}, and one "
                   "named like a workload key sets that key",
}


def _expect_schema(schema: dict[str, Any]) -> None:
    """Expectation keys as the metric table has them (iogate.metrics): every standard path
    named, with what it measures, so that an editor completes them; any other path of the
    table by its pattern; nothing else."""
    comparison = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"},
                                                "minItems": 1}]}
    schema["properties"] = {path: {**comparison, "description": describe(parse_metric(path))}
                            for path in standard_paths()}
    schema["patternProperties"] = {regex: {**comparison, "description": about}
                                   for regex, about in key_patterns()}
    schema["additionalProperties"] = False


class WorkloadEntry(Defaults):
    """A workload as written in the file: any field may come from the defaults."""

    name: Name = Field(description=ABOUT["name"])
    # Checked by iogate.spec, which reports each point's problem at its place.
    sweep: Annotated[Any, WithJsonSchema(SWEEP_SCHEMA)] = None
    fail_fast: bool | None = Field(default=None, description=ABOUT["fail_fast"])
    steady_state: SteadyState | None = Field(default=None, description=ABOUT["steady_state"])
    exitall: ExitAll | None = Field(default=None, description=EXITALL_DESCRIPTION)
    verify_state: OutputPath | None = Field(default=None,
                                              description=VERIFY_STATE_DESCRIPTION)
    # Values are checked by iogate.expect, which explains a bare number better.
    expect: dict[str, Any] = Field(default_factory=dict, description=(
        "metric -> comparison, e.g. 'read.clat.p99': '<= 1.2ms', or a list of comparisons "
        "on the same metric, e.g. ['>= 0.45', '<= 0.55']"), json_schema_extra=_expect_schema)
    per_host: dict[str, Any] = Field(default_factory=dict, description=(
        "expectations like expect's, judged on each host of a fleet on its own (expect "
        "judges the fleet as a whole); a run on this machine is one host"),
        json_schema_extra=_expect_schema)


class SuiteFile(BaseModel):
    """A suite file as written."""

    model_config = ConfigDict(strict=True, extra="forbid", title="iogate suite")
    suite: Name = Field(description="the suite's name, [A-Za-z0-9_.-], in ids and reports")
    description: Description | None = Field(default=None, description=(
        "what the suite is for, shown in reports"))
    defaults: Defaults | None = Field(default=None, description=(
        "workload keys every workload starts from; a workload's own keys win"))
    workloads: Annotated[list[WorkloadEntry], Field(min_length=1)] = Field(description=(
        "the workloads, run one after another unless they share a group; names unique"))
