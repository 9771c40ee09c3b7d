"""The hosts of a fleet: where ``fio --server`` daemons listen.

A host list is written ``h1,h2:8765,[::1]:9000`` (comma separated, no spaces), or
``@FILE`` naming a file with one host a line (``#`` starts a comment; the file read as
:mod:`iogate.inputs` reads every input, at most 1 MiB). A host is a name, an IPv4 address or
an IPv6 address in brackets, with an optional ``:PORT`` (default :data:`DEFAULT_PORT`,
fio's own). Anything else is a ValueError naming the bad item.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from iogate.inputs import HOSTS_BYTES, InputError, read_text

DEFAULT_PORT = 8765  # what `fio --server` listens on when given no port

_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_PORT = re.compile(r"[0-9]{1,5}")
_SHOWN = 80  # longest item quoted in a message


@dataclass(frozen=True)
class Host:
    """One fio server: a host name or address, and its port."""

    name: str
    port: int = DEFAULT_PORT

    @property
    def is_ipv6(self) -> bool:
        return ":" in self.name

    @property
    def key(self) -> str:
        """How results and messages name the host: ``name:port`` (``[addr]:port`` for IPv6)."""
        return f"[{self.name}]:{self.port}" if self.is_ipv6 else f"{self.name}:{self.port}"

    @property
    def fio_client(self) -> str:
        """The value of fio's ``--client`` option for this host."""
        if self.is_ipv6:
            return f"ip6:{self.name},{self.port}"
        if _is_ipv4(self.name):
            return f"ip:{self.name},{self.port}"
        return f"{self.name},{self.port}"

    def __str__(self) -> str:
        return self.key


def parse_hosts(text: str) -> list[Host]:
    """The hosts of a host list (``h1,h2:8765,[::1]:9000``) or of ``@FILE``.

    Raises ValueError naming the bad item (and the file and line for ``@FILE``): an empty
    item, spaces, a bad port, a bad name or address, or a host given twice.
    """
    if text.startswith("@"):
        return _parse_file(text[1:])
    if not text:
        raise ValueError("the host list is empty")
    hosts: list[Host] = []
    seen: dict[Host, str] = {}
    for n, item in enumerate(text.split(","), 1):
        where = f"host {n} of the list"
        host = _parse_item(item, where)
        _add(hosts, seen, host, item, where)
    return hosts


def _parse_file(name: str) -> list[Host]:
    if not name:
        raise ValueError("'@' must be followed by the name of a file listing the hosts")
    try:
        lines = read_text(name, HOSTS_BYTES, "a host list").splitlines()
    except InputError as exc:
        raise ValueError(f"cannot read the host list {exc}") from None
    hosts: list[Host] = []
    seen: dict[Host, str] = {}
    for n, line in enumerate(lines, 1):
        item = line.split("#", 1)[0].strip()
        if not item:
            continue
        where = f"{name}:{n}"
        _add(hosts, seen, _parse_item(item, where), item, where)
    if not hosts:
        raise ValueError(f"the host list {name} names no host")
    return hosts


def _add(hosts: list[Host], seen: dict[Host, str], host: Host, item: str, where: str) -> None:
    if host in seen:
        raise ValueError(f"{where}: {_quote(item)} is {host.key} again (first at {seen[host]})")
    seen[host] = where
    hosts.append(host)


def _parse_item(item: str, where: str) -> Host:
    """One ``name[:port]`` or ``[ipv6][:port]``."""
    if not item:
        raise ValueError(f"{where} is empty (a stray comma?)")
    if any(c.isspace() for c in item):
        raise ValueError(f"{where}: {_quote(item)} contains spaces; separate hosts with "
                         "commas only")
    if item.startswith("["):
        end = item.find("]")
        if end < 0:
            raise ValueError(f"{where}: {_quote(item)} has no closing ']'")
        name, rest = item[1:end], item[end + 1:]
        if not _is_ipv6(name):
            raise ValueError(f"{where}: {_quote(name)} in brackets is not an IPv6 address")
        if rest and not rest.startswith(":"):
            raise ValueError(f"{where}: {_quote(item)}: expected ':PORT' after ']'")
        # One spelling per address, so that [::1] and [0::1] are the same host.
        name = str(ipaddress.ip_address(name))
        return Host(name, _port(rest[1:], item, where) if rest else DEFAULT_PORT)
    if item.count(":") > 1:
        hint = f" (write [{item}] for an IPv6 address)" if _is_ipv6(item) else ""
        raise ValueError(f"{where}: {_quote(item)} has more than one ':'{hint}")
    name, colon, port = item.partition(":")
    if not _is_hostname(name):
        raise ValueError(f"{where}: {_quote(name)} is not a host name or IPv4 address")
    return Host(name, _port(port, item, where) if colon else DEFAULT_PORT)


def _port(text: str, item: str, where: str) -> int:
    if not _PORT.fullmatch(text) or not 1 <= int(text) <= 65535:
        raise ValueError(f"{where}: {_quote(item)}: port {_quote(text)} is not a number from "
                         "1 to 65535")
    return int(text)


def _is_hostname(name: str) -> bool:
    if _is_ipv4(name):
        return True
    if not name or len(name) > 253 or name.replace(".", "").isdigit():
        return False  # all digits: a mistyped address, not a name
    return all(_LABEL.fullmatch(label) for label in name.removesuffix(".").split("."))


def _is_ipv4(name: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(name), ipaddress.IPv4Address)
    except ValueError:
        return False


def _is_ipv6(name: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address)
    except ValueError:
        return False


def _quote(text: str) -> str:
    shown = text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
    return "'" + shown.encode("unicode_escape").decode("ascii") + "'"
