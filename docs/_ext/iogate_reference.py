"""The documentation's reference pages, made from iogate's own tables when the site is built:
the suite keys (the JSON Schema of suite files, which the pydantic models make), the metrics
(``iogate.metrics``), what each fio option becomes on import (``iogate.fio.vocabulary``) and
the command line (the argument parser). A page asks for one with a line of its own,
``% iogate-reference: NAME`` (a MyST comment, so the page stays readable as it is written);
the line is replaced by the generated Markdown before the page is parsed.

The renderers are plain functions of those tables, so the tests can check them without
Sphinx (``tests/layout/test_docs.py``)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterable
from typing import Any

MARKER = re.compile(r"^% iogate-reference: ([a-z-]+)[ \t]*$", re.MULTILINE)
VARIABLE_NOTE = "a value with a variable"


# -- helpers ------------------------------------------------------------------------------


def _cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _table(headers: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    headers = list(headers)
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


# -- suite keys ---------------------------------------------------------------------------


def _values(prop: dict[str, Any]) -> list[str]:
    """The kinds of value a schema property takes, in words, without the variable form
    (every value may be written with a variable, which the page says once)."""
    said: list[str] = []

    def add(text: str) -> None:
        if text and text not in said:
            said.append(text)

    def walk(node: dict[str, Any], top: bool) -> None:
        description = node.get("description", "")
        if description.startswith(VARIABLE_NOTE):
            return
        if "enum" in node:
            add("one of " + ", ".join(_code(v) for v in node["enum"]))
            return
        if "anyOf" in node:
            if description and not top:
                add(description)
                return
            for sub in node["anyOf"]:
                walk(sub, False)
            return
        if description and not top:
            add(description)
            return
        kind = node.get("type")
        kinds = kind if isinstance(kind, list) else [kind]
        for k in kinds:
            if k == "null":
                continue
            if k == "boolean":
                add("true or false")
            elif k == "integer":
                low, high = node.get("minimum"), node.get("maximum")
                add("an integer" + (f" from {low}" if low is not None else "")
                    + (f" to {high}" if high is not None else ""))
            elif k == "number":
                add("a number")
            elif k == "string":
                add("a string")
            elif k == "array":
                add("a list")
            elif k == "object":
                add("a mapping")
        if "$ref" in node:
            add("a mapping (below)")

    walk(prop, True)
    return said


def _default(prop: dict[str, Any]) -> str | None:
    if "default" not in prop:
        return None
    value = prop["default"]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter and a full stop."""
    text = " ".join(text.split())
    if not text:
        return text
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _key_section(key: str, prop: dict[str, Any], extra: list[str]) -> list[str]:
    out = [f"### `{key}`", "", _sentence(prop.get("description", "")), ""]
    values = _values(prop)
    if values:
        out += [f"- **Value:** {'; or '.join(values)}"]
    default = _default(prop)
    if default is not None:
        out += [f"- **Default:** {_code(default)}"]
    out += [f"- {line}" for line in extra]
    return [*out, ""]


# How fio writes a plain key's value, where it is not a plain count.
_FIO_UNITS = {"us": "microseconds", "size": "bytes", "bool": "0 or 1"}


def keys_page() -> str:
    """Every key of a suite file: the top level, the workload keys (with where each may be
    written and the fio option it reads), and the mappings some of them take."""
    from iogate.fio.vocabulary import FIO_OPTIONS
    from iogate.spec.keys import PLAIN
    from iogate.spec.schema import json_schema

    schema = json_schema()
    defs = schema["$defs"]
    workload = defs["WorkloadEntry"]["properties"]
    in_defaults = set(defs["Defaults"]["properties"])
    in_steps = set(defs["PreconditionEntry"]["properties"])
    out = ["## The top level", ""]
    required = set(schema.get("required", ()))
    for key, prop in schema["properties"].items():
        out += _key_section(key, prop, ["**Required**"] if key in required else [])
    out += ["## Workload keys", "",
            "Each workload is a mapping of these keys. A key marked *defaults* may also be "
            "given once under `defaults:` for every workload, and one marked *precondition* "
            "in a `precondition:` step.", ""]
    for key, prop in workload.items():
        where = [w for w, ok in (("defaults", key in in_defaults),
                                 ("precondition", key in in_steps)) if ok]
        extra = [f"**Also in:** {', '.join(where)}"] if where else []
        fio = PLAIN[key].fio if key in PLAIN else key if key in FIO_OPTIONS else None
        extra.append(f"**fio:** {_code(fio)}" if fio else "**fio:** none (iogate's own)")
        if key in PLAIN and PLAIN[key].fio_unit in _FIO_UNITS:
            extra.append(f"**fio's unit:** {_FIO_UNITS[PLAIN[key].fio_unit]}")
        out += _key_section(key, prop, extra)
    out += ["## `steady_state`", "", _sentence(defs["SteadyState"].get("description", "")),
            ""]
    for key, prop in defs["SteadyState"]["properties"].items():
        out += _key_section(key, prop, [])
    return "\n".join(out)


# -- metrics ------------------------------------------------------------------------------


def metrics_page() -> str:
    """One row per family of metrics (``iogate metrics``): its paths, base unit, what it is
    and what fio reports it from."""
    from iogate.metrics import UNITS, families, pattern

    rows = [(_code(pattern(f)), UNITS[f.kind], f.about,
             f"the {f.plugin} plugin" if f.plugin else (f.fio or "not measured"))
            for f in families()]
    return "\n".join(_table(("metric", "unit", "what it is", "fio's source"), rows))


# -- fio options --------------------------------------------------------------------------


def fio_options_page() -> str:
    """Every fio job option, and what an imported job file's option becomes; then fio's I/O
    engines."""
    from iogate.engine import catalog
    from iogate.fio.vocabulary import ALIASES, ENGINE_ALIASES, FIO_OPTIONS, fate
    from iogate.spec.schema import json_schema

    keys = set(json_schema()["$defs"]["WorkloadEntry"]["properties"])
    def linked(text: str) -> str:
        # a suite key's name links to its entry in the key reference
        return re.sub(r"\bthe suite key ([a-z_]+)",
                      lambda m: f"the suite key [{_code(m.group(1))}](keys.md#{m.group(1)})",
                      text)

    rows = [(_code(o), linked(fate(o, keys))) for o in sorted(FIO_OPTIONS | set(ALIASES))]
    out = ["## Job options", "", *_table(("fio option", "on import"), rows), "",
           "## I/O engines", ""]
    engines = [(_code(e.name), _code(e.name), e.summary) for e in catalog.engines()]
    engines += [(_code(a), _code(n), f"fio's {a} issues the same requests as {n}")
                for a, n in sorted(ENGINE_ALIASES.items())]
    engines += [(_code("aio") + ", " + _code("linuxaio"), _code("libaio"),
                 "fio's names for its libaio engine"),
                (_code("splice"), _code("psync"),
                 "the same requests at the same offsets, without the pipe")]
    out += _table(("fio ioengine", "iogate engine", "what it does"), engines)
    return "\n".join(out)


# -- command line -------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((name, helps.get(name, ""), sub))
    return found


def _arguments(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            metavar = action.metavar or (action.dest.upper() if action.nargs != 0 else None)
            if metavar and action.nargs == "?":
                metavar = f"[{metavar}]"
            shown = ", ".join(action.option_strings) + (f" {metavar}" if metavar else "")
        else:
            shown = action.metavar or action.dest
        text = action.help or ""
        if "%(default)s" in text:
            text = text.replace("%(default)s", str(action.default))
        rows.append((_code(shown), text))
    return rows


def cli_page() -> str:
    """Every command of ``iogate`` with its usage line and arguments, from the parser the
    command itself uses."""
    from iogate.cli import build_parser

    out: list[str] = ["## Every command", ""]

    def command(prog: str, about: str, parser: argparse.ArgumentParser, level: int) -> None:
        out.extend([f"{'#' * level} `{prog}`", ""])
        if about:
            out.extend([_sentence(about), ""])
        formatter = argparse.HelpFormatter(parser.prog, width=80)
        formatter.add_usage(parser.usage, parser._actions,
                            parser._mutually_exclusive_groups, prefix="")
        out.extend(["```text", formatter.format_help().rstrip(), "```", ""])
        rows = _arguments(parser)
        if rows:
            out.extend([*_table(("argument", "meaning"), rows), ""])
        for name, help_, sub in _subcommands(parser):
            command(f"{prog} {name}", help_, sub, level + 1)

    for name, help_, sub in _subcommands(build_parser()):
        command(f"iogate {name}", help_, sub, 3)
    return "\n".join(out)


PAGES: dict[str, Callable[[], str]] = {
    "keys": keys_page,
    "metrics": metrics_page,
    "fio-options": fio_options_page,
    "cli": cli_page,
}


def expand(text: str) -> str:
    """``text`` with every reference marker replaced by its generated Markdown."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in PAGES:
            raise ValueError(f"no reference named {name!r}: one of {', '.join(PAGES)}")
        return PAGES[name]()
    return MARKER.sub(one, text)


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    source[0] = expand(source[0])


def _always_outdated(app: Any, env: Any, added: Any, changed: Any, removed: Any) -> list[str]:
    """The generated pages are rebuilt every time: their source is the code, not the page."""
    return [name for name in env.found_docs
            if MARKER.search((app.srcdir / (name + ".md")).read_text(encoding="utf-8"))]


def setup(app: Any) -> dict[str, Any]:
    app.connect("source-read", _source_read)
    app.connect("env-get-outdated", _always_outdated)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
