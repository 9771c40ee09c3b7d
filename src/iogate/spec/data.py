"""The data a job writes and how it checks it: buffer_pattern (hex or text, as bytes) and
verify (the checksums the engine computes, fio's names for them, and the smallest block
each allows), each with its parser and its JSON schema.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

from iogate.engine.limits import PATTERN_MAX, VERIFY_HEADER
from iogate.errors import spoken
from iogate.expr import shown
from iogate.spec.fields import describe_input

# -- data ---------------------------------------------------------------------------------

def _pattern(value: Any) -> Any:
    """``0xdeadbeef`` as bytes, any other string as its UTF-8 bytes (fio's quotes optional)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, bool) or not isinstance(value, str):
        if isinstance(value, int):
            raise ValueError(f"{value}: decimal patterns are not accepted; write hex like "
                             f"'{value:#x}' or a quoted string")
        raise ValueError(f"expected hex like '0xdeadbeef' or a string, got "
                         f"{describe_input(value)}")
    text = value.strip()
    if text[:2].lower() == "0x":
        digits = text[2:]
        if not digits or not re.fullmatch(r"[0-9a-fA-F]+", digits):
            raise ValueError(f"'{shown(value)}' is not a hex pattern: after 0x only 0-9 "
                             "and a-f")
        data = bytes.fromhex(("0" if len(digits) % 2 else "") + digits)
    else:
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]  # fio's own quoting, buffer_pattern="abc"
        if not value:
            raise ValueError("buffer_pattern must not be empty")
        data = value.encode()
    if len(data) > PATTERN_MAX:
        raise ValueError(f"buffer_pattern is {len(data)} bytes; at most {PATTERN_MAX}")
    return data


Pattern = Annotated[bytes, BeforeValidator(_pattern),
                    PlainSerializer(lambda b: "0x" + b.hex(), return_type=str),
                    WithJsonSchema({
                        "anyOf": [{"type": "string"},
                                  # 0xdeadbeef unquoted is a number to a YAML 1.2 reader (an
                                  # editor's); iogate reads it as the hex it is written as.
                                  {"type": "integer", "minimum": 0}],
                        "description": "hex like 0xdeadbeef or a string whose UTF-8 bytes are "
                                       "the pattern, at most 256 bytes"})]


# -- verification -------------------------------------------------------------------------

VERIFIERS = ("crc32c", "crc32", "crc64", "xxhash", "xxh32", "xxh64", "md5", "sha1", "sha256",
             "sha512", "meta", "none")
# Digests longer than 8 bytes, kept whole after the header: their bytes (iogate.h).
_LONG_DIGESTS = {"md5": 16, "sha1": 20, "sha256": 32, "sha512": 64}
# fio's names for the same checksums.
_VERIFY_ALIASES = {"crc32c-intel": "crc32c"}
# fio checksums the engine does not compute, named so that the message can say so.
_FIO_VERIFIERS = ("crc16", "crc7", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "pattern",
                  "null")


def verify_min_block(name: str) -> int:
    """The smallest write block size verify ``name`` allows: the header, and after it the
    digest area of a digest longer than 8 bytes (its length rounded up to 8)."""
    digest = _LONG_DIGESTS.get(name, 0)
    return VERIFY_HEADER + (digest + 7) // 8 * 8


def _verify(value: Any) -> Any:
    if not isinstance(value, str):
        return value  # the type check says what is wrong
    name = _VERIFY_ALIASES.get(value, value)
    if name in VERIFIERS:
        return name
    choices = spoken(VERIFIERS)
    if value in _FIO_VERIFIERS:
        raise ValueError(f"verify '{value}' is not supported; use {choices}")
    raise ValueError(f"unknown verify '{shown(value)}'; use {choices}")


Verify = Annotated[Literal["crc32c", "crc32", "crc64", "xxhash", "xxh32", "xxh64", "md5", "sha1",
                           "sha256", "sha512", "meta", "none"],
                   BeforeValidator(_verify),
                   WithJsonSchema({"enum": [*VERIFIERS, *_VERIFY_ALIASES]})]
