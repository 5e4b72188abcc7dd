"""Cases the sans-IO connection tests and the real-pipe ones share, so both judge the same
inputs: frames no MCP peer should send and what a server answers each with (its JSON-RPC
error code, the id it echoes); params that are invalid and the JSON path named; the
requests every legacy version answers (against the everything server)."""

from __future__ import annotations

import pytest

from mcpgen.runtime import INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

BAD_FRAMES = [
    # malformed JSON
    pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', PARSE_ERROR, None, id="truncated-json"),
    pytest.param(b"this is not json", PARSE_ERROR, None, id="garbage"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 1,, "method": "ping"}', PARSE_ERROR, None, id="double-comma"),
    pytest.param(b"\xff\xfe\x00{}", PARSE_ERROR, None, id="not-utf8"),
    # invalid envelopes
    pytest.param(b'{"jsonrpc":"1.0","id":"v1","method":"ping"}', INVALID_REQUEST, "v1", id="jsonrpc-1.0"),
    pytest.param(b'{"id":"v2","method":"ping"}', INVALID_REQUEST, "v2", id="no-jsonrpc"),
    pytest.param(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None, id="id-float"),
    pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None, id="id-bool"),
    pytest.param(b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', INVALID_REQUEST, None, id="id-object"),
    pytest.param(b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', INVALID_REQUEST, None, id="id-array"),
    pytest.param(b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None, id="id-null"),
    pytest.param(b'{"jsonrpc":"2.0","id":"m","method":42}', INVALID_REQUEST, "m", id="method-number"),
    pytest.param(b'{"jsonrpc":"2.0","id":"p","method":"ping","params":"x"}', INVALID_REQUEST, "p", id="params-string"),
    pytest.param(b'{"jsonrpc":"2.0","id":"e"}', INVALID_REQUEST, "e", id="no-method"),
    pytest.param(b'[{"jsonrpc":"2.0","id":"b","method":"ping"}]', INVALID_REQUEST, None, id="batch-not-allowed"),
    pytest.param(b"[]", INVALID_REQUEST, None, id="empty-array"),
    pytest.param(b"42", INVALID_REQUEST, None, id="number"),
    pytest.param(b'"a string"', INVALID_REQUEST, None, id="string"),
    pytest.param(b"null", INVALID_REQUEST, None, id="null"),
    pytest.param(b"true", INVALID_REQUEST, None, id="boolean"),
    # unknown methods (and methods of the wrong direction or era)
    pytest.param(b'{"jsonrpc":"2.0","id":"u1","method":"foo/bar"}', METHOD_NOT_FOUND, "u1", id="unknown-method"),
    pytest.param(b'{"jsonrpc":"2.0","id":"u2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}', METHOD_NOT_FOUND, "u2", id="server-to-client-method"),
    pytest.param(b'{"jsonrpc":"2.0","id":"u3","method":"server/discover","params":{}}', METHOD_NOT_FOUND, "u3", id="modern-only-method"),
]  # fmt: skip


INVALID_PARAMS_CASES = [
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
    pytest.param(
        "prompts/get", {"name": "p", "arguments": {"a": 1}}, "$.params.arguments", id="map-value"
    ),
    pytest.param("logging/setLevel", {"level": "loud"}, "$.params.level", id="log-level"),
]  # fmt: skip

COMPLETE_PARAMS = {
    "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
    "argument": {"name": "arg1", "value": "test"},
}
#: Requests every legacy version has, and the result key that proves a proper answer.
LEGACY_REQUESTS = [
    ("tools/list", {}, "tools"),
    ("tools/call", {"name": "test_simple_text"}, "content"),
    ("resources/list", {}, "resources"),
    ("resources/templates/list", {}, "resourceTemplates"),
    ("resources/read", {"uri": "test://static-text"}, "contents"),
    ("prompts/list", {}, "prompts"),
    ("prompts/get", {"name": "test_simple_prompt"}, "messages"),
    ("completion/complete", COMPLETE_PARAMS, "completion"),
]
#: Keys only 2026-07-28 results have (the everything server is written against 2026).
MODERN_RESULT_KEYS = frozenset({"resultType", "ttlMs", "cacheScope"})
