"""Shell completion (``iogate completion bash|zsh``): a script made from the command's own
argument parser, so every subcommand and option it completes is one the parser takes.

Subcommands complete first, then each one's options (with their choices where an option has
some) and file names for the rest. Install with ``source <(iogate completion bash)`` in
``~/.bashrc``, or ``iogate completion zsh > "${fpath[1]}/_iogate"``.
"""

from __future__ import annotations

import argparse
import re
import shlex

SHELLS = ("bash", "zsh")


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps subparsers among the actions
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {a.dest: a.help or "" for a in action._choices_actions}
    return {}


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings]


def _positionals(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions
            if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def bash(parser: argparse.ArgumentParser) -> str:
    """The bash completion script of ``parser``."""
    subs = _subcommands(parser)
    cases = []
    for name, sub in subs.items():
        words = " ".join(s for a in _options(sub) for s in a.option_strings)
        choices = [(s, " ".join(map(str, a.choices))) for a in _options(sub) if a.choices
                   for s in a.option_strings]
        prev = "".join(f"            {shlex.quote(s)}) COMPREPLY=($(compgen -W "
                       f"{shlex.quote(c)} -- \"$cur\")); return ;;\n" for s, c in choices)
        fixed = " ".join(str(c) for a in _positionals(sub) if a.choices for c in a.choices)
        cases.append(f"        {shlex.quote(name)})\n"
                     f"            opts={shlex.quote(words)}\n"
                     + (f"            words={shlex.quote(fixed)}\n" if fixed else "")
                     + (f"            case \"$prev\" in\n{prev}            esac\n"
                        if prev else "")
                     + "            ;;\n")
    top = " ".join([*subs, *(s for a in _options(parser) for s in a.option_strings)])
    return (
        "# bash completion for iogate (iogate completion bash)\n"
        "_iogate() {\n"
        "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
        "    local opts=\"\" words=\"\"\n"
        "    if [[ $COMP_CWORD -eq 1 ]]; then\n"
        f"        COMPREPLY=($(compgen -W {shlex.quote(top)} -- \"$cur\"))\n"
        "        return\n"
        "    fi\n"
        "    case \"${COMP_WORDS[1]}\" in\n"
        + "".join(cases) +
        "    esac\n"
        "    if [[ \"$cur\" == -* ]]; then\n"
        "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
        "    elif [[ -n \"$words\" ]]; then\n"
        "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
        "    else\n"
        "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "    fi\n"
        "}\n"
        "complete -o filenames -o bashdefault -F _iogate iogate\n")


_ZSH_SAFE = str.maketrans("[]:'\\", "()   ")


def _zsh_text(text: str) -> str:
    """Help text fit for a zsh _arguments or _describe spec (no brackets, colons, quotes)."""
    text = re.sub(r"\s+", " ", text.replace("%%", "%")).strip()
    return text.translate(_ZSH_SAFE)


def zsh(parser: argparse.ArgumentParser) -> str:
    """The zsh completion script of ``parser``."""
    subs = _subcommands(parser)
    helps = _helps(parser)
    described = "\n".join(f"        '{name}:{_zsh_text(helps.get(name, ''))}'" for name in subs)
    cases = []
    for name, sub in subs.items():
        specs = []
        for action in _options(sub):
            about = _zsh_text(action.help or "")
            takes = action.nargs != 0
            value = ""
            if takes:
                value = (f":value:({' '.join(map(str, action.choices))})" if action.choices
                         else ":value:_files")
            many = "*" if isinstance(action, argparse._AppendAction) else ""
            for s in action.option_strings:
                specs.append(f"'{many}{s}[{about}]{value}'")
        choices = [a for a in _positionals(sub) if a.choices]
        specs += [f"'{n}:{a.dest}:({' '.join(map(str, a.choices or ()))})'"
                  for n, a in enumerate(choices, 1)]
        if not choices:
            specs.append("'*:file:_files'")
        cases.append(f"    ({name})\n        _arguments -s \\\n            "
                     + " \\\n            ".join(specs) + "\n        ;;\n")
    return (
        "#compdef iogate\n"
        "# zsh completion for iogate (iogate completion zsh)\n"
        "_iogate() {\n"
        "    local -a commands\n"
        f"    commands=(\n{described}\n    )\n"
        "    if (( CURRENT == 2 )); then\n"
        "        _describe 'command' commands\n"
        "        return\n"
        "    fi\n"
        "    words=(\"${(@)words[2,-1]}\")\n"
        "    (( CURRENT-- ))\n"
        "    case $words[1] in\n"
        + "".join(cases) +
        "    esac\n"
        "}\n"
        "_iogate \"$@\"\n")


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    return bash(parser) if shell == "bash" else zsh(parser)
