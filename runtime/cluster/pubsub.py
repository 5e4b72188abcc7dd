"""A Redis pub/sub subscription held for as long as a process runs: what the bus and the
shared sessions listen with. A lost connection is an outage (logged once as it begins and
once as it ends); the subscription is made again, and what was published meanwhile is
lost, as pub/sub keeps nothing."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from redis import exceptions as redis_errors

from ..tasks.outage import Outage
from ..tasks.redis_errors import UNREACHABLE

log = logging.getLogger("mcpgen.runtime.cluster")

#: Seconds between attempts to subscribe again after the connection was lost.
RESUBSCRIBE_S = 1.0


async def listen(
    client: Any,
    channels: Sequence[str],
    take: Callable[[Any], Awaitable[None]],
    outage: Outage,
    subscribed: asyncio.Event,
    what: str,
) -> None:
    """Hand the data of every message on ``channels`` to ``take``, until cancelled;
    ``subscribed`` is set once every channel is (again); ``what`` names the listener in
    the log."""
    while True:
        pubsub: Any = client.pubsub()
        try:
            await pubsub.subscribe(*channels)
            confirmed = 0
            while True:
                message = await pubsub.get_message(timeout=None)
                if not message:
                    continue
                if message["type"] == "subscribe":
                    confirmed += 1
                    if confirmed == len(channels):
                        subscribed.set()
                        outage.reached()
                elif message["type"] == "message":
                    await take(message["data"])
        except asyncio.CancelledError:
            raise
        except (*UNREACHABLE, OSError) as error:
            outage.lost(error)
        except Exception as error:  # anything else: subscribe again
            log.warning("%s stopped listening (%r); again", what, error)
        finally:
            with contextlib.suppress(redis_errors.RedisError, OSError):
                await pubsub.aclose()
        await asyncio.sleep(RESUBSCRIBE_S)


__all__ = ["RESUBSCRIBE_S", "listen"]
