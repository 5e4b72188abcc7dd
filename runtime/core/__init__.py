"""The sans-IO protocol core: bytes and messages in, events and bytes out, no I/O and no
awaiting. It owns JSON-RPC framing (``jsonrpc``, ``json_skim``), the connection state
machine (``connection``, with the lifecycle as a table in ``lifecycle``), version
negotiation and era rules as tables (``negotiation``, ``handshake``, ``capabilities``),
what goes out re-shaped to the peer's version (``outgoing``, ``params``,
``elicitation``), the 2026-07-28 per-request rules (``modern``, ``request_state``), the
binding contract generated code meets (``binding``), extensions, the events a
connection emits, every bound in one ``Limits``, and the error codes.

May import: msgspec and the standard library only (a test holds it to that).
"""
