"""The sans-IO rules of URL-mode elicitation and tool-enabled sampling: which modes a
client's capabilities take, what a server may ask a client of each version, how URL params
are named per version, and how a -32042 error's data is read."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.runtime.core import elicitation
from mcpgen.runtime.core.capabilities import refusal_to_ask, refusal_when_asked
from mcpgen.runtime.core.errors import (
    INVALID_PARAMS,
    MISSING_CLIENT_CAPABILITY,
    McpError,
    UrlElicitationRequired,
)
from support.sansio import client

VERSIONS = client().versions
URL_PARAMS = {"mode": "url", "message": "Go", "url": "https://example.com/x"}
TOOLS = {"messages": [], "maxTokens": 1, "tools": []}


@pytest.mark.parametrize(
    "declared,form,url",
    [
        ({}, False, False),
        ({"elicitation": {}}, True, False),  # 2025-06-18's form, kept by 2025-11-25
        ({"elicitation": {"form": {}}}, True, False),
        ({"elicitation": {"url": {}}}, False, True),
        ({"elicitation": {"form": {}, "url": {}}}, True, True),
        ({"elicitation": {"url": None}}, False, False),
        ({"elicitation": True}, True, False),
        ({"elicitation": False}, False, False),
    ],
)
def test_the_modes_a_client_declared(declared: dict[str, Any], form: bool, url: bool) -> None:
    assert elicitation.declares_mode(declared, "form") is form
    assert elicitation.declares_mode(declared, "url") is url


def test_url_elicitations_are_named_in_2025_11_25_only() -> None:
    named = elicitation.url_params_for(dict(URL_PARAMS), VERSIONS["2025-11-25"])
    assert isinstance(named["elicitationId"], str)
    kept = elicitation.url_params_for({**URL_PARAMS, "elicitationId": "a"}, VERSIONS["2025-11-25"])
    assert kept["elicitationId"] == "a"
    unnamed = elicitation.url_params_for(
        {**URL_PARAMS, "elicitationId": "a"}, VERSIONS["2026-07-28"]
    )
    assert "elicitationId" not in unnamed
    assert [v for v in VERSIONS.of_era("legacy") if elicitation.has_url_mode(VERSIONS[v])] == [
        "2025-11-25"
    ]


@pytest.mark.parametrize(
    "version,method,params,declared,refused",
    [
        ("2025-11-25", "elicitation/create", URL_PARAMS, {"elicitation": {"url": {}}}, False),
        ("2025-11-25", "elicitation/create", URL_PARAMS, {"elicitation": {}}, True),
        ("2025-06-18", "elicitation/create", URL_PARAMS, {"elicitation": {"url": {}}}, True),
        ("2026-07-28", "elicitation/create", URL_PARAMS, {"elicitation": {"url": {}}}, False),
        ("2025-11-25", "sampling/createMessage", TOOLS, {"sampling": {"tools": {}}}, False),
        ("2025-11-25", "sampling/createMessage", TOOLS, {"sampling": {}}, True),
        ("2025-06-18", "sampling/createMessage", TOOLS, {"sampling": {"tools": {}}}, True),
        ("2026-07-28", "sampling/createMessage", TOOLS, {"sampling": {}}, True),
        ("2025-11-25", "sampling/createMessage", {"maxTokens": 1}, {"sampling": {}}, False),
        ("2025-11-25", "roots/list", {}, {}, False),
    ],
)
def test_what_a_server_may_ask_a_client(
    version: str, method: str, params: Any, declared: dict[str, Any], refused: bool
) -> None:
    """Refused (MissingRequiredClientCapability, naming the capability) when the client did
    not declare it or its version does not have it."""
    refusal = refusal_to_ask(method, params, declared, VERSIONS[version])
    assert (refusal is not None) is refused
    if refusal is not None:
        assert refusal.code == MISSING_CLIENT_CAPABILITY
        assert refusal.data["requiredCapabilities"] in (
            {"elicitation": {"url": {}}},
            {"sampling": {"tools": {}}},
        )


def test_a_client_refuses_what_it_did_not_declare_with_invalid_params() -> None:
    refusal = refusal_when_asked("elicitation/create", URL_PARAMS, {"elicitation": {}})
    assert refusal is not None and refusal.code == INVALID_PARAMS
    assert "capabilities.elicitation.url" in refusal.message
    assert (
        refusal_when_asked("elicitation/create", URL_PARAMS, {"elicitation": {"url": {}}}) is None
    )
    assert refusal_when_asked("sampling/createMessage", TOOLS, {"sampling": {}}) is not None


def test_a_handler_s_url_elicitation_required_names_each_elicitation() -> None:
    raised = UrlElicitationRequired([{"message": "Go", "url": "https://example.com/x"}])
    (one,) = raised.elicitations
    assert one["mode"] == "url" and isinstance(one["elicitationId"], str)
    assert raised.code == -32042 and raised.data == {"elicitations": [one]}


@pytest.mark.parametrize(
    "data,kept",
    [
        ({"elicitations": [{**URL_PARAMS, "elicitationId": "a"}]}, 1),
        ({"elicitations": [{"message": "Go", "url": "u", "elicitationId": "a"}]}, 1),
        ({"elicitations": [{**URL_PARAMS, "elicitationId": 1}]}, 0),
        ({"elicitations": [{**URL_PARAMS, "mode": "form", "elicitationId": "a"}]}, 0),
        ({"elicitations": {"a": 1}}, 0),
        ([1, 2], 0),
        (None, 0),
    ],
)
def test_a_received_minus_32042_keeps_only_url_elicitations(data: Any, kept: int) -> None:
    received = UrlElicitationRequired.from_error(McpError(-32042, "visit", data))
    assert len(received.elicitations) == kept
    assert received.message == "visit" and received.data == data
