"""Params a server cannot take: -32602 naming the JSON path of the problem, in either era
(the everything server's connection, sans-IO; the stdio suite sends the same over a pipe).
"""

from __future__ import annotations

import sys
from pathlib import Path

from typing import Any

import pytest

from mcpgen.runtime.core.errors import INVALID_PARAMS
from support.sansio import answer, everything, feed, handshake, modern, request

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.wire_cases import INVALID_PARAMS_CASES as CASES  # noqa: E402


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25"])
@pytest.mark.parametrize(("method", "params", "path"), CASES)
def test_invalid_params_in_a_session_name_the_json_path(
    version: str, method: str, params: Any, path: str
) -> None:
    conn = everything().connection()
    handshake(conn, version)
    frame = answer(feed(conn, request("bad", method, params)))
    refused = frame["error"]
    assert frame["id"] == "bad"
    assert refused["code"] == INVALID_PARAMS and refused["data"]["path"].startswith(path)


@pytest.mark.parametrize(
    ("method", "params", "path"),
    [case for case in CASES if isinstance(case.values[1], dict) and case.id != "log-level"],
)
def test_invalid_params_of_a_modern_request_name_the_json_path(
    method: str, params: dict[str, Any], path: str
) -> None:
    frame = answer(feed(everything().connection(), modern("bad", method, params)))
    refused = frame["error"]
    assert frame["id"] == "bad"
    assert refused["code"] == INVALID_PARAMS and refused["data"]["path"].startswith(path)
