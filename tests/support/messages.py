"""JSON-RPC messages as plain data, for drivers that write frames themselves."""

from __future__ import annotations

from typing import Any


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize(version: str = "2025-11-25", request_id: Any = 1) -> dict[str, Any]:
    """A legacy ``initialize`` declaring no capabilities: answered by any server."""
    client = {"name": "test", "version": "0"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return request(request_id, "initialize", params)
