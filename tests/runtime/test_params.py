"""Params a server cannot take: -32602 naming the JSON path of the problem, in either era
(the everything server's connection, sans-IO; the stdio suite sends the same over a pipe).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.runtime.errors import INVALID_PARAMS
from sansio import answer, everything, feed, handshake, modern, request

CASES = [
    pytest.param("tools/call", {"name": 5}, "$.params.name", id="wrong-type"),
    pytest.param("tools/call", {}, "$.params", id="missing-field"),
    pytest.param("tools/call", [1], "$.params", id="params-array"),
    pytest.param("resources/read", None, "$.params", id="params-missing"),
    pytest.param(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": 3}},
        "$.params.argument.value",
        id="nested",
    ),
    pytest.param("prompts/get", {"name": "p", "arguments": {"a": 1}}, "$.params.arguments", id="map-value"),
    pytest.param("logging/setLevel", {"level": "loud"}, "$.params.level", id="log-level"),
]  # fmt: skip


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
