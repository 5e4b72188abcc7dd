"""What the client does with a request the server answers -32042 (URL elicitation
required): raise it as :class:`~runtime.core.errors.UrlElicitationRequired`, or, with a
wait set and an ``elicit`` handler, show the user each URL through that handler, wait for
the server to say each elicitation completed, and send the request once more."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from ..core import elicitation
from ..core.errors import URL_ELICITATION_REQUIRED, McpError, UrlElicitationRequired
from ..core.json_values import member
from .answers import Answers

#: The answer of the client's handler to one input request: ``fulfil(key, ask)``.
Fulfil = Callable[[str, Any], Awaitable[Any]]


class UrlElicitations:
    """-32042 answers of one client session: ``wait`` (seconds, None: never followed) is
    how long the server is given to say the user's visits completed; ``answers`` says
    whether the client has an ``elicit`` handler, ``fulfil`` asks it."""

    def __init__(self, wait: float | None, answers: Answers, fulfil: Fulfil) -> None:
        if wait is not None and not wait > 0:
            raise ValueError(f"url_elicitation_wait must be positive, got {wait!r}")
        self.wait = wait
        self.answers = answers
        self.fulfil = fulfil
        #: The completion each visit waits for, by elicitation id.
        self.completions: dict[str, asyncio.Future[None]] = {}

    async def send(self, sent: Callable[[], Awaitable[Any]]) -> Any:
        """``sent()``'s answer, -32042 raised as ``UrlElicitationRequired``; with a wait
        set, the user is sent to its URLs first and the request sent once more."""
        try:
            return await sent()
        except McpError as exc:
            if exc.code != URL_ELICITATION_REQUIRED:
                raise
            required = UrlElicitationRequired.from_error(exc)
        if not await self._visited(required):
            raise required
        try:
            return await sent()
        except McpError as exc:
            if exc.code != URL_ELICITATION_REQUIRED:
                raise
            raise UrlElicitationRequired.from_error(exc) from None

    def completed(self, params: Any) -> None:
        """A ``notifications/elicitation/complete``: the visit waiting for it goes on."""
        name = member(msgspec.to_builtins(params), elicitation.ELICITATION_ID)
        waiter = self.completions.get(name) if isinstance(name, str) else None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _visited(self, required: UrlElicitationRequired) -> bool:
        """Show the user each URL of ``required`` (the ``elicit`` handler), then wait at
        most ``wait`` seconds for the server to say each completed: True when every one
        was accepted; False (nothing more shown) when the client does not do this, or the
        user did not accept one."""
        wait = self.wait
        if wait is None or not required.elicitations or not self.answers.answers("elicit"):
            return False
        loop = asyncio.get_running_loop()
        names = [str(one["elicitationId"]) for one in required.elicitations]
        waiting = {name: self.completions.setdefault(name, loop.create_future()) for name in names}
        try:
            for one, name in zip(required.elicitations, names):
                ask = {"method": elicitation.METHOD, "params": one}
                try:
                    answer = await self.fulfil(f"url-elicitation:{name}", ask)
                except McpError:
                    return False
                if member(answer, "action") != "accept":
                    return False
            await asyncio.wait(list(waiting.values()), timeout=wait)
            return True
        finally:
            for name in names:
                self.completions.pop(name, None)
