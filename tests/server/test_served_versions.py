"""The everything server (the conformance fixture) in each handshake version, served over
in-memory transports to a raw JSON-RPC peer: what each version's session answers, and
which requests the server may send the client in it. ``test_stdio_runtime.py`` proves the
same over a real pipe for one version; the version matrix runs here, in milliseconds."""

from __future__ import annotations

import sys
from pathlib import Path

from typing import Any

import pytest

from mcpgen.runtime.core.errors import METHOD_NOT_FOUND
from support.sansio import (
    LEGACY,
    RawPeer,
    everything,
    initialize,
    notification,
    request,
    run,
    serving,
)

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.wire_cases import LEGACY_REQUESTS, MODERN_RESULT_KEYS  # noqa: E402


async def opened(peer: RawPeer, version: str, capabilities: Any = None) -> dict[str, Any]:
    await peer.send(initialize(0, version, capabilities))
    result = (await peer.answer_to(0))["result"]
    await peer.send(notification("notifications/initialized"))
    return result


@pytest.mark.parametrize("version", LEGACY)
def test_each_handshake_version_is_echoed_and_answered_in_its_own_shape(version: str) -> None:
    async def scenario() -> None:
        async with serving(everything()) as peer:
            result = await opened(peer, version)
            assert result["protocolVersion"] == version
            assert result["serverInfo"]["name"] == "mcpgen-everything"
            capabilities = result["capabilities"]
            assert {"tools", "prompts", "resources", "logging"} <= capabilities.keys()
            assert ("completions" in capabilities) == (version >= "2025-03-26")
            assert not MODERN_RESULT_KEYS & result.keys()
            for request_id, (method, params, key) in enumerate(LEGACY_REQUESTS, 1):
                await peer.send(request(request_id, method, params))
                answer = await peer.answer_to(request_id)
                assert key in answer.get("result", {}), (method, answer)
                assert not MODERN_RESULT_KEYS & answer["result"].keys(), (method, answer)
            await peer.send(request(20, "logging/setLevel", {"level": "error"}))
            assert (await peer.answer_to(20))["result"] == {}
            await peer.send(request(21, "server/discover", {}))
            assert (await peer.answer_to(21))["error"]["code"] == METHOD_NOT_FOUND

    run(scenario())


def tool_text(answer: Any) -> str:
    assert "result" in answer, answer
    return answer["result"]["content"][0]["text"]


@pytest.mark.parametrize("version", LEGACY)
def test_sampling_in_every_version_and_elicitation_from_2025_06_18(version: str) -> None:
    async def scenario() -> None:
        async with serving(everything()) as peer:
            await opened(peer, version, {"sampling": {}, "elicitation": {}})
            sample = {"name": "test_sampling", "arguments": {"prompt": "hi"}}
            await peer.send(request(1, "tools/call", sample))
            asked = await peer.read()
            assert asked["method"] == "sampling/createMessage"
            assert asked["params"]["messages"][0]["content"]["text"] == "hi"
            content = {"type": "text", "text": "sampled"}
            answer = {"role": "assistant", "content": content, "model": "m"}
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
            assert tool_text(await peer.answer_to(1)) == "LLM response: sampled"

            elicit = {"name": "test_elicitation", "arguments": {"message": "who?"}}
            await peer.send(request(2, "tools/call", elicit))
            if version >= "2025-06-18":
                asked = await peer.read()
                assert asked["method"] == "elicitation/create"
                assert asked["params"]["message"] == "who?"
                assert "requestedSchema" in asked["params"]
                accept = {"action": "accept", "content": {"username": "ada"}}
                await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": accept})
                assert "action=accept" in tool_text(await peer.answer_to(2))
            else:
                answered = await peer.answer_to(2)
                failed = "error" in answered or answered["result"].get("isError") is True
                assert failed, answered
                assert peer.backlog == []  # no elicitation/create was sent

    run(scenario())
