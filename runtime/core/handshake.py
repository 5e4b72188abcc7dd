"""The legacy era's handshake, both sides: what ``initialize`` and its result carry, read
before any version is known (so with shapes of their own, not a version's types), and the
version each side settles on. The connection keeps the state it leads to."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from . import jsonrpc, modern
from .errors import UNSUPPORTED_PROTOCOL_VERSION, McpError, NegotiationError
from .jsonrpc import RequestId
from .negotiation import Versions, accept_answer, answer_initialize
from .params import validation_error
from .json_values import as_object


class InitializeParams(msgspec.Struct):
    """What a server must read from ``initialize`` before it knows the version."""

    protocolVersion: str
    capabilities: dict[str, Any]
    clientInfo: dict[str, Any]


class InitializeResult(msgspec.Struct):
    """What a client must read from the answer to its ``initialize``."""

    protocolVersion: str
    capabilities: dict[str, Any]
    serverInfo: dict[str, Any]
    instructions: str | msgspec.UnsetType = UNSET


def read_initialize(params: msgspec.Raw | None, versions: Versions) -> tuple[str, InitializeParams]:
    """A server reads ``initialize``: the version it answers with, and the params; raises
    ``McpError`` (-32602 for bad params, the unsupported-version error otherwise)."""
    try:
        read = msgspec.json.decode(params or b"{}", type=InitializeParams)
    except msgspec.ValidationError as exc:
        raise validation_error(exc, "params") from None
    try:
        return answer_initialize(read.protocolVersion, versions), read
    except NegotiationError:
        raise McpError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version: this server does not speak the initialize handshake",
            {"supported": list(versions), "requested": read.protocolVersion},
        ) from None


def initialize_result(
    chosen: str, capabilities: dict[str, Any], info: dict[str, Any], instructions: str | None
) -> InitializeResult:
    return InitializeResult(
        protocolVersion=chosen,
        capabilities=capabilities,
        serverInfo=info,
        instructions=instructions if instructions is not None else UNSET,
    )


def initialize_request(
    request_id: RequestId,
    offered: tuple[str, ...],
    capabilities: dict[str, Any],
    info: dict[str, Any],
) -> bytes:
    """A client's ``initialize``, offering ``offered[-1]`` (its newest)."""
    params = {"protocolVersion": offered[-1], "capabilities": capabilities, "clientInfo": info}
    return jsonrpc.encode_request(request_id, "initialize", params)


def read_initialize_result(
    raw: msgspec.Raw, offered: tuple[str, ...]
) -> tuple[str, InitializeResult]:
    """A client reads the server's answer: the version agreed, and the result; raises
    ``NegotiationError`` when it is invalid or names a version the client did not offer."""
    try:
        result = msgspec.json.decode(raw, type=InitializeResult)
    except msgspec.ValidationError as exc:
        raise NegotiationError(f"invalid initialize result: {exc}") from None
    return accept_answer(result.protocolVersion, offered), result


def read_discovered(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str | None]:
    """A modern server's capabilities, implementation info and instructions, from its
    ``server/discover`` result (plain JSON; what is malformed is left out)."""
    capabilities = as_object(result.get("capabilities")) or {}
    meta = as_object(result.get("_meta")) or {}
    info = as_object(meta.get(modern.SERVER_INFO)) or {}
    instructions = result.get("instructions")
    return capabilities, info, instructions if isinstance(instructions, str) else None
