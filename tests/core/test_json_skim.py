"""Reading frames no decoder may read (``runtime/core/json_skim.py``): RFC 8259 syntax, judged
as the standard library's ``json`` judges it, at any depth and without recursion; the id
and the kind (request, notification) of a top-level object, from its top level only.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.runtime.core.json_skim import MAX_KEYS, is_json, top_level


def stdlib_says_json(data: bytes) -> bool:
    def no_constants(name: str) -> Any:
        raise ValueError(name)

    try:
        json.loads(data.decode("utf-8"), parse_constant=no_constants)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False
    return True


#: Pieces of JSON and of near-JSON: every token kind, and what breaks each.
PIECES = [
    b"[", b"]", b"{", b"}", b",", b":", b" ", b"\n", b"\t", b"\r", b"\x0c", b'"a"', b'"id"',
    b'"', b"\\", b'"\\u00e9"', b'"\\q"', b'"\\ud800"', b"\x01", b"\xc3\xa9", b"\xff", b"0",
    b"1", b"01", b"-", b"-0", b"1.5", b"1.", b".5", b"1e5", b"1e", b"1E+2", b"1e400", b"true",
    b"tru", b"false", b"null", b"NaN", b"x",
]  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14))
def test_is_json_agrees_with_the_standard_library(pieces: list[bytes]) -> None:
    frame = b"".join(pieces)
    assert is_json(frame) == stdlib_says_json(frame), frame


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(JSON_VALUES, st.integers(min_value=0), st.sampled_from([None, 2]))
def test_valid_json_is_json_and_each_cut_of_it_judged_as_json_judges_it(
    value: Any, cut: int, indent: int | None
) -> None:
    frame = json.dumps(value, indent=indent, ensure_ascii=False).encode()
    assert is_json(frame)
    cut_frame = frame[: cut % (len(frame) + 1)]
    assert is_json(cut_frame) == stdlib_says_json(cut_frame), cut_frame


@pytest.mark.parametrize("depth", [1, 100, 100_000])
def test_depth_decides_nothing(depth: int) -> None:
    """Nested as deep as a frame may go: judged whole, no recursion, both ways."""
    arrays = b"[" * depth + b"]" * depth
    objects = b'{"a":' * depth + b"0" + b"}" * depth
    mixed = b'[{"a":' * depth + b"[]" + b"}]" * depth
    assert is_json(arrays) and is_json(objects) and is_json(mixed)
    assert not is_json(arrays[:-1]) and not is_json(objects + b"}") and not is_json(mixed[1:])
    swapped = b"[" * depth + b"}" + b"]" * (depth - 1)
    assert not is_json(swapped)
    if depth > sys.getrecursionlimit():
        with pytest.raises(RecursionError):
            json.loads(arrays)  # what a recursive reader does with it


@pytest.mark.parametrize(
    ("frame", "why"),
    [
        (b'{"a" 1}', "no colon"),
        (b'["a":1]', "a key in an array"),
        (b'{"a":1,2}', "a value without a key in an object"),
        (b"[1,]", "a trailing comma"),
        (b"[1 2]", "two values with only a blank between"),
        (b'["a""b"]', "two strings side by side"),
        (b'{"a":1}{"b":2}', "two values"),
        (b'{"a":1]', "a bracket of the other kind"),
        (b'"a\nb"', "a raw newline in a string"),
        (b"[01]", "a leading zero"),
        (b"[-]", "a lone minus"),
        (b"[\x0c]", "form feed is no JSON whitespace"),
    ],
)
def test_what_json_forbids_is_not_json(frame: bytes, why: str) -> None:
    assert not stdlib_says_json(frame), why
    assert not is_json(frame), why


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"x","params":{}}', (7, False)),
        (b'{"method":"x","params":{"id":5,"a":[[[]]]},"jsonrpc":"2.0","id":"z"}', ("z", False)),
        (b'{"jsonrpc":"2.0","method":"x","params":{"id":5}}', (None, True)),
        (b'{"method":"x","params":{"s":"\\"id\\": 4"}, "id" : -12 }', (-12, False)),
        (b'{"method":"x","key\\"id":3}', (None, True)),  # a key that only ends in id
        (b'{"id":1.5,"method":"x"}', (None, False)),  # an id, though not one to answer with
        (b'{"id":"\\ud800","method":"x"}', (None, False)),
        (b'{"id":null,"method":"x"}', (None, False)),
        (b'{"params":{"id":1}}', (None, False)),
        (b'[{"id":1,"method":"x"}]', (None, False)),  # a batch: no one id
        (b' "id" ', (None, False)),
    ],
)
def test_top_level_reads_the_id_and_the_kind_of_a_message(
    frame: bytes, expected: tuple[Any, bool]
) -> None:
    assert is_json(frame)
    assert top_level(frame) == expected


def test_top_level_gives_up_past_so_many_keys_and_says_so() -> None:
    """Nested ``id`` keys first, the top-level one after: past :data:`MAX_KEYS` keys no id,
    and no notification either (an id may follow)."""
    nested = b'{"id":1,"a":' * MAX_KEYS + b"0" + b"}" * MAX_KEYS
    assert top_level(b'{"method":"x","params":' + nested + b',"id":5}') == (None, False)
    assert top_level(b'{"method":"x","id":5,"params":' + nested + b"}") == (5, False)
