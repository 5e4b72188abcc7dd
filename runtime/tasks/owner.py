"""Whose a task is: the key a task engine files a task under, which every later request
about it must match (``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/cancel``,
``tasks/update``), and which the per-owner bounds count by.

The default, :func:`session_owner`, takes what outlives a connection where there is one:

- a request authenticated on a protected HTTP endpoint: its principal (issuer, subject
  and client, :attr:`~runtime.http.auth.principal.Principal.key`), in both eras. Its tasks are
  found again from any session, by any worker, and after a server restart (with a shared
  store such as Redis), and by no other principal;
- an unauthenticated 2025-11-25 request over HTTP: its legacy session (``Mcp-Session-Id``).
  Nothing else tells its client apart, so its tasks are that session's: a new session
  (the one a client starts after the server restarted, or after its session was ended or
  evicted) finds none of them, finished ones included, although a shared store still
  keeps them until their TTL;
- anything else (stdio, in memory, an unauthenticated 2026-07-28 request over HTTP):
  nobody in particular (""). Nothing tells these requesters apart, so the per-owner
  bounds do not apply to them (a stdio server's one client, or all of a public server's,
  would otherwise share one owner's quota): only the bounds for everybody do. Their
  tasks survive a restart with a shared store. A task id is an unguessable 128-bit
  secret, which is what keeps one such requester from another's task.

``Tasks(owner=...)`` replaces it (a tenant from a header set by a trusted proxy, say).
"""

from __future__ import annotations

from ..aio.session import RequestScope


def session_owner(scope: RequestScope) -> str:
    """Whose the task of ``scope``'s request is, by default (see the module's docstring)."""
    http = scope.event.http
    if http is None:
        return ""
    principal = http.principal
    if principal is not None:
        return str(principal.key)
    return http.header("mcp-session-id") or ""


__all__ = ["session_owner"]
