"""How much a session may subscribe to: ``Limits.max_subscriptions`` resources at once,
none by a URI longer than ``Limits.max_uri_length``. Both eras: a legacy session's
``resources/subscribe`` URIs; a 2026-07-28 ``subscriptions/listen`` filter's URIs (and
task ids), per stream and over one connection's open streams together.

A refusal is -32602 (invalid params) naming the limit in its message and ``data``. Not
-32000 ("busy", as ``max_in_flight`` answers): that says "retry later", and a retry gets
the same answer until the client unsubscribes; and 2026-07-28 allocates no new meaning in
-32000..-32019, where -32602 is what a listen filter the server will not take gets (HTTP
400). Nothing of a refused request is held, and the subscriptions held stay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import INVALID_PARAMS, McpError
from .limits import Limits
from .json_values import as_array

#: Listen filters that name what they want (a list) rather than turn a kind on.
NAMING = ("resourceSubscriptions", "taskIds")


def _too_long(length: int, limits: Limits, path: str) -> McpError:
    most = limits.max_uri_length
    return McpError(
        INVALID_PARAMS,
        f"Invalid params: a URI of {length} characters, more than the {most} this server "
        "takes (Limits.max_uri_length)",
        {"path": path, "limit": "max_uri_length", "max": most},
    )


def _too_many(held: int, limits: Limits, path: str) -> McpError:
    most = limits.max_subscriptions
    return McpError(
        INVALID_PARAMS,
        f"Invalid params: too many subscriptions ({held} asked for; this server takes "
        f"{most} per session, Limits.max_subscriptions); unsubscribe from some first",
        {"path": path, "limit": "max_subscriptions", "max": most},
    )


def subscribe_refusal(held: set[str], uri: object, limits: Limits) -> McpError | None:
    """Why a legacy session subscribed to ``held`` may not subscribe to ``uri`` (None: it
    may, if its handler agrees). Subscribing again to a URI held takes no more room."""
    if not isinstance(uri, str):
        return None
    if len(uri) > limits.max_uri_length:
        return _too_long(len(uri), limits, "$.params.uri")
    if uri not in held and len(held) >= limits.max_subscriptions:
        return _too_many(len(held) + 1, limits, "$.params.uri")
    return None


def listen_refusal(requested: Mapping[str, Any], limits: Limits) -> McpError | None:
    """Why one listen filter is refused: it names more than ``max_subscriptions`` things
    or one longer than ``max_uri_length`` (None: it is within both)."""
    for key in NAMING:
        items = as_array(requested.get(key))
        if items is None:
            continue
        path = f"$.params.notifications.{key}"
        if len(items) > limits.max_subscriptions:
            return _too_many(len(items), limits, path)
        for index, item in enumerate(items):
            if isinstance(item, str) and len(item) > limits.max_uri_length:
                return _too_long(len(item), limits, f"{path}[{index}]")
    return None


def weight(honoured: Mapping[str, Any]) -> int:
    """What one open listen stream counts against ``max_subscriptions``: the things its
    filter names, at least one (the stream itself)."""
    named = (as_array(honoured.get(key)) for key in NAMING)
    return max(1, sum(len(items) for items in named if items is not None))


def streams_refusal(
    open_streams: Iterable[Mapping[str, Any]], honoured: Mapping[str, Any], limits: Limits
) -> McpError | None:
    """Why a connection whose listen streams have ``open_streams`` filters may not open
    one more honouring ``honoured`` (None: it may)."""
    total = weight(honoured) + sum(weight(each) for each in open_streams)
    if total > limits.max_subscriptions:
        return _too_many(total, limits, "$.params.notifications")
    return None


__all__ = ["NAMING", "listen_refusal", "streams_refusal", "subscribe_refusal", "weight"]
