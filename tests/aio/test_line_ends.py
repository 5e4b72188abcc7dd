"""The id of a stdio line too long to hold, from the two ends kept of it
(``runtime/aio/line_ends.py``): the start read forward, the end read backward, only the
top-level members either shows whole."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.runtime.aio.line_ends import EDGE, Seen, from_end, identify

CUT = b"x" * 10  # where the middle of the line was, out of sight


@pytest.mark.parametrize(
    ("tail", "seen"),
    [
        (CUT + b'"}},"jsonrpc":"2.0","id":5}', Seen(5, True)),
        (CUT + b'", "id" : "a\\"b" }\r\n', Seen('a"b', True)),
        (CUT + b'\\\\"}, "id":7}', Seen(7, True)),  # an escaped backslash ends that string
        (CUT + b'"},"params":{"a":[1,"]"]},"id":-9}', Seen(-9, True)),  # a bracket in a string
        (CUT + b'"}},"method":"tools/call","params":{}}', Seen(method=True)),
        (CUT + b'", "id": 1.5}', Seen(None, True)),  # an id, though not one to answer with
        (CUT + b'"}, "id": "\\ud800"}', Seen(None, True)),
        (CUT + b"}}", Seen()),  # only the inside of a member: nothing seen
        (b"12345}", Seen()),  # a number cut off: it may have gone on
        (CUT + b'"}]', Seen()),  # a batch
        (CUT + b'"}, "params": {"id": 3}}', Seen()),  # a nested id is not the request's
    ],
)
def test_the_end_of_a_line_shows_its_last_members(tail: bytes, seen: Seen) -> None:
    assert from_end(tail) == seen


@pytest.mark.parametrize(
    ("head", "tail", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":"first","params":{"a":"' + CUT, CUT + b'"}}', ("first", False)),
        (b'{"method":"x","params":{"a":"' + CUT, CUT + b'"},"jsonrpc":"2.0","id":12}', (12, False)),
        (b'{"jsonrpc":"2.0","method":"x","params":{"a":"' + CUT, CUT + b'"}}', (None, True)),
        # an id key whose value runs into the middle: a request, its id unseen
        (b'{"jsonrpc":"2.0","method":"x","id":"' + CUT, CUT + b'"}', (None, False)),
        (b'{"params":{"a":"' + CUT, CUT + b'"},"more":"' + CUT, (None, False)),  # nothing seen
    ],
)
def test_a_line_is_identified_by_either_end(head: bytes, tail: bytes, expected: Any) -> None:
    assert identify(head, tail) == expected


def test_reading_an_end_is_bounded_by_what_was_kept() -> None:
    """An end of :data:`EDGE` bytes of nested brackets and strings: read backward until a
    value runs past it, never further."""
    tail = (b'[{"a":"]' * EDGE)[-EDGE:] + b'"}]}'
    assert from_end(tail) == Seen()
