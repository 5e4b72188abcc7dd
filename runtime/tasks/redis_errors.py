"""What Redis's errors mean for a task store built on it: the store cannot serve now
(unreachable, or answering that it cannot write), or the call itself is wrong."""

from __future__ import annotations

from redis import exceptions as redis_errors

#: Redis unreachable for now: refused, dropped, silent past a timeout, still loading.
UNREACHABLE = (redis_errors.ConnectionError, redis_errors.TimeoutError)
#: Redis answering that it cannot serve now: a replica during a failover, out of memory,
#: a cluster slot moving or down.
REFUSING = (
    redis_errors.ReadOnlyError,
    redis_errors.OutOfMemoryError,
    redis_errors.TryAgainError,
    redis_errors.ClusterDownError,
)
#: The same, as a script's error carries them after its own text (Redis 6), and a script
#: of another client running too long (BUSY).
_CODES = (
    "-OOM ",
    "-READONLY ",
    "-LOADING ",
    "-MASTERDOWN ",
    "-TRYAGAIN ",
    "-CLUSTERDOWN ",
    "-BUSY ",
)


def cannot_serve(error: redis_errors.RedisError) -> bool:
    """Whether ``error`` says Redis cannot serve now (the store is unavailable: retry
    later), rather than that the call itself is wrong."""
    if isinstance(error, (*UNREACHABLE, *REFUSING)):
        return True
    text = str(error)
    return any(code in text for code in _CODES)


def refused(error: redis_errors.RedisError) -> bool:
    """Whether ``error`` (one Redis cannot serve for) is Redis answering that it cannot,
    rather than not answering at all."""
    return not isinstance(error, UNREACHABLE)


__all__ = ["REFUSING", "UNREACHABLE", "cannot_serve", "refused"]
