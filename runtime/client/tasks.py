"""The requester's side of tasks, in both eras: call a tool as a task and follow it.

``handle = await session.call_tool_as_task("research", {"topic": "bees"})`` gives a
:class:`TaskHandle`: ``await handle.status()`` (a :class:`TaskInfo`), ``await
handle.result()`` (the ``CallToolResult`` of the session's binding), ``await
handle.cancel()``.

- 2025-11-25 (core tasks): the call carries ``params.task``; the server answers
  ``CreateTaskResult`` (``{task}``), or an ordinary result when it does not run the tool
  as a task (the handle is then complete). ``result()`` polls ``tasks/get`` at the task's
  ``pollInterval`` (woken early by ``notifications/tasks/status``) and, once the task
  ends or waits for input, blocks on ``tasks/result``: the server sends its input
  requests (tied to the task by the related-task ``_meta``) over the session, and the
  client's handlers answer them as any other request. ``list_tasks`` pages ``tasks/list``.
- 2026-07-28 (the ``io.modelcontextprotocol/tasks`` extension): the call declares the
  extension (for that request alone, unless the session declares it for all); the
  server answers with a task (``resultType: "task"``) or its immediate result.
  ``result()`` polls ``tasks/get``, whose answer inlines the outcome; the input requests
  it lists (``inputRequests``) are answered with the client's handlers and
  ``tasks/update``. A session that declares the extension for all its requests follows
  the tasks a plain ``call_tool`` gets the same way, and returns their results.

A failed task raises ``McpError`` with the task's error; a cancelled one
:class:`TaskCancelled`; a tool's own failure (``isError``) is a result. Every wait is
bounded by :class:`TaskPolling` (``max_wait``; the task goes on, ``cancel()`` ends it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from ..aio.session import ProgressCallback, Session
from ..core import params as p
from ..core.connection import Connection
from ..core.extensions import Extension, declare
from ..core.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from ..core.json_values import as_object
from ..tasks.extension import EXTENSION, DetailedTask
from ..tasks.store import TERMINAL

CALL_TOOL = "tools/call"
Status = Literal["working", "input_required", "completed", "failed", "cancelled"]


class TaskPolling(msgspec.Struct, frozen=True, kw_only=True):
    """How a client follows a task: ``max_wait`` seconds at most for its result (then
    ``TimeoutError``; the task goes on), polled at the server's suggested interval held
    within ``min_interval`` and ``max_interval`` (``default_interval`` when it suggests
    none), and ``page_limit`` pages of ``tasks/list`` at most per listing."""

    max_wait: float = 600.0
    min_interval: float = 0.05
    max_interval: float = 10.0
    default_interval: float = 1.0
    page_limit: int = 100

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            if getattr(self, name) <= 0:
                raise ValueError(f"TaskPolling.{name} must be positive")
        if self.min_interval > self.max_interval:
            raise ValueError("TaskPolling.min_interval must not exceed max_interval")

    def interval(self, suggested_ms: int | None) -> float:
        wanted = self.default_interval if suggested_ms is None else suggested_ms / 1000
        return min(self.max_interval, max(self.min_interval, wanted))


class TaskInfo(msgspec.Struct, frozen=True, kw_only=True):
    """A task's state, as either era reports it."""

    task_id: str
    status: Status
    status_message: str | None = None
    created_at: str = ""
    last_updated_at: str = ""
    #: Retention from creation (None: unlimited) and the suggested poll interval, in ms.
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


class TaskCancelled(McpError):
    """The task was cancelled: its request has no outcome."""

    def __init__(self, task_id: str) -> None:
        super().__init__(INVALID_REQUEST, f"Task {task_id} was cancelled", {"taskId": task_id})


# -- the 2025-11-25 wire forms (what the server must send; anything else is refused) ------


class LegacyTask(msgspec.Struct, kw_only=True):
    task_id: str = msgspec.field(name="taskId")
    status: Status
    status_message: str | UnsetType = msgspec.field(default=UNSET, name="statusMessage")
    created_at: str = msgspec.field(name="createdAt")
    last_updated_at: str = msgspec.field(name="lastUpdatedAt")
    ttl: int | None
    poll_interval: int | UnsetType = msgspec.field(default=UNSET, name="pollInterval")

    def info(self) -> TaskInfo:
        return TaskInfo(
            task_id=self.task_id,
            status=self.status,
            status_message=self.status_message or None,
            created_at=self.created_at,
            last_updated_at=self.last_updated_at,
            ttl_ms=self.ttl,
            poll_interval_ms=self.poll_interval or None,
        )


class LegacyCreated(msgspec.Struct, kw_only=True):
    task: LegacyTask


class LegacyTaskList(msgspec.Struct, kw_only=True):
    tasks: list[LegacyTask]
    next_cursor: str | None = msgspec.field(default=None, name="nextCursor")


class TaskRequester(Protocol):
    """What following a task needs of the client session that asked for it
    (:class:`~runtime.client.session.ClientSession` is one)."""

    @property
    def conn(self) -> Connection: ...
    @property
    def session(self) -> Session | None: ...
    @property
    def era(self) -> str: ...
    @property
    def server_capabilities(self) -> dict[str, Any]: ...
    @property
    def task_polling(self) -> TaskPolling: ...
    @property
    def task_watch(self) -> TaskWatch: ...

    async def request(
        self,
        method: str,
        params: Any = ...,
        result: Any = None,
        progress: ProgressCallback | None = None,
        *,
        task_result: Any = None,
        opt_in: Sequence[Extension] = (),
    ) -> Any: ...

    async def fulfil(self, key: str, ask: Any) -> Any: ...


def modern_info(task: DetailedTask) -> TaskInfo:
    if task.status not in ("working", "input_required", "completed", "failed", "cancelled"):
        raise McpError(INTERNAL_ERROR, f"Invalid task: unknown status {task.status!r}")
    status: Status = task.status  # type: ignore[assignment]  # checked above
    return TaskInfo(
        task_id=task.task_id,
        status=status,
        status_message=task.status_message or None,
        created_at=task.created_at,
        last_updated_at=task.last_updated_at,
        ttl_ms=task.ttl_ms,
        poll_interval_ms=task.poll_interval_ms or None,
    )


def legacy_tasks(session: TaskRequester) -> bool:
    """Whether the session's server runs tools as 2025-11-25 tasks."""
    version = session.conn.version
    caps = as_object(session.server_capabilities.get("tasks")) or {}
    requests = as_object(caps.get("requests")) or {}
    tools = as_object(requests.get("tools")) or {}
    return (
        version is not None
        and version.spec("client", "tasks/get") is not None
        and isinstance(tools.get("call"), dict)
    )


def declares_tasks(capabilities: Any) -> bool:
    """Whether ``capabilities`` (a client's) declare the tasks extension."""
    return EXTENSION.declared("modern", as_object(capabilities) or {})


def augmented(params: Any) -> bool:
    """Whether request ``params`` (typed or plain) ask to run as a 2025-11-25 task."""
    plain = as_object(params)
    found = plain.get("task") if plain is not None else getattr(params, "task", None)
    return found is not None and found is not UNSET


def task_result_of(session: TaskRequester, method: str, params: Any) -> Any:
    """What a task made of this request decodes to (None: the request makes none)."""
    if session.era == "legacy":
        if method not in p.AUGMENTABLE or not augmented(params):
            return None
        typed = getattr(session.conn.local.binding.types, "CreateTaskResult", None)
        return typed if session.conn.local.binding.era == "legacy" and typed else LegacyCreated
    if session.era == "modern" and method == CALL_TOOL:
        return DetailedTask if declares_tasks(session.conn.capabilities) else None
    return None


def final(session: TaskRequester, plain: Any, raw: msgspec.Raw | None = None) -> Any:
    """A task's outcome (plain JSON, or ``raw``) as the binding's ``CallToolResult``."""
    conn = session.conn
    version = conn.version
    spec = version.spec("client", CALL_TOOL) if version is not None else None
    local = conn.local.types_of("client", CALL_TOOL) or spec
    if spec is None or local is None:
        raise McpError(INTERNAL_ERROR, "this session has no tools/call to type a result with")
    raw = raw if raw is not None else msgspec.Raw(msgspec.json.encode(plain))
    pending = p.Pending(CALL_TOOL, spec.result, local.result)
    return p.decoded(raw, pending, version, conn.local)


class TaskHandle:
    """A tool call the server runs as a task (or answered at once: ``immediate``)."""

    def __init__(
        self,
        session: TaskRequester,
        created: TaskInfo | None,
        outcome: Any = None,
        polling: TaskPolling | None = None,
    ) -> None:
        self.session = session
        self.polling = polling or session.task_polling
        #: The task as created (None: the server answered the call at once).
        self.created = created
        self.era = session.era
        self._outcome = outcome
        self._answered: set[str] = set()

    @property
    def task_id(self) -> str:
        return self.created.task_id if self.created is not None else ""

    @property
    def immediate(self) -> bool:
        return self.created is None

    async def _ask(
        self, method: str, result: Any, timeout: float | None = None, **more: Any
    ) -> Any:
        if self.session.session is None:
            raise RuntimeError("not connected")
        options: dict[str, Any] = {"result": result}
        if self.era == "modern":
            options["capabilities"] = declare(self.session.conn.capabilities, (EXTENSION,))
        params = {"taskId": self.task_id, **more}
        return await self.session.session.request(method, params, timeout=timeout, **options)

    async def status(self) -> TaskInfo:
        """The task's state now (an immediate answer: ``completed``)."""
        if self.created is None:
            return TaskInfo(task_id="", status="completed")
        if self.era == "modern":
            return modern_info(await self._ask("tasks/get", DetailedTask))
        return (await self._ask("tasks/get", LegacyTask)).info()

    async def cancel(self) -> TaskInfo | None:
        """Ask the server to cancel the task: its state after (2025-11-25, where
        cancelling an ended task is an error) or None (2026-07-28 acknowledges only)."""
        if self.created is None:
            return None
        if self.era == "modern":
            await self._ask("tasks/cancel", None)
            return None
        return (await self._ask("tasks/cancel", LegacyTask)).info()

    async def result(self, max_wait: float | None = None) -> Any:
        """The call's result once the task ends (``TimeoutError`` after ``max_wait``
        seconds, default ``TaskPolling.max_wait``; the task goes on)."""
        if self._outcome is not None or self.created is None:
            return self._outcome
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (max_wait or self.polling.max_wait)
        follow = self._modern if self.era == "modern" else self._legacy
        try:
            self._outcome = await follow(deadline)
        except asyncio.TimeoutError as exc:  # a request's own (not TimeoutError on 3.10)
            raise TimeoutError(f"task {self.task_id} did not end in time") from exc
        return self._outcome

    def _left(self, deadline: float) -> float:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise TimeoutError(f"task {self.task_id} did not end in time (TaskPolling.max_wait)")
        return left

    async def _pause(self, info: TaskInfo, deadline: float) -> None:
        """Wait the poll interval, or less: until a status notification of the task."""
        pause = min(self.polling.interval(info.poll_interval_ms), self._left(deadline))
        await self.session.task_watch.wait(self.task_id, pause)

    async def _legacy(self, deadline: float) -> Any:
        while True:
            info = await self.status()
            if info.status == "cancelled":
                raise TaskCancelled(self.task_id)
            if info.terminal or info.status == "input_required":
                raw = await self._ask("tasks/result", msgspec.Raw, timeout=self._left(deadline))
                return final(self.session, None, raw)
            await self._pause(info, deadline)

    async def _modern(self, deadline: float) -> Any:
        while True:
            task = await self._ask("tasks/get", DetailedTask, timeout=self._left(deadline))
            info = modern_info(task)
            if info.status == "failed" and task.error is not UNSET:
                raise failure(task.error)
            if info.status in ("completed", "failed"):  # failed: a tool's own failure
                if task.result is UNSET:
                    missing = "result" if info.status == "completed" else "result nor error"
                    raise McpError(INTERNAL_ERROR, f"Invalid task: {info.status} with no {missing}")
                return final(self.session, task.result)
            if info.status == "cancelled":
                raise TaskCancelled(self.task_id)
            asked: dict[str, Any] = {}
            if task.input_requests is not UNSET:
                asked = task.input_requests
            fresh = {k: v for k, v in asked.items() if k not in self._answered}
            if fresh:
                answers = {key: await self.session.fulfil(key, ask) for key, ask in fresh.items()}
                self._answered.update(answers)
                await self._ask("tasks/update", None, inputResponses=answers)
                continue
            await self._pause(info, deadline)


def failure(error: Any) -> McpError:
    """A failed task's error object as the exception to raise."""
    found = as_object(error) or {}
    code, message = found.get("code"), found.get("message")
    if not isinstance(code, int) or not isinstance(message, str):
        return McpError(INTERNAL_ERROR, f"Invalid task: failed with no valid error ({error!r})")
    return McpError(code, message, found.get("data"))


async def call_tool_as_task(
    session: TaskRequester,
    name: str,
    arguments: dict[str, Any] | None = None,
    ttl_ms: int | None = None,
    polling: TaskPolling | None = None,
) -> TaskHandle:
    """Call tool ``name`` asking the server to run it as a task (see the module)."""
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if session.era == "modern":
        answer = await session.request(
            CALL_TOOL, params, task_result=DetailedTask, opt_in=(EXTENSION,)
        )
        if isinstance(answer, DetailedTask):
            return TaskHandle(session, modern_info(answer), polling=polling)
        return TaskHandle(session, None, answer, polling)
    if legacy_tasks(session):
        params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
    answer = await session.request(CALL_TOOL, params, task_result=LegacyCreated)
    if isinstance(answer, LegacyCreated):
        return TaskHandle(session, answer.task.info(), polling=polling)
    return TaskHandle(session, None, answer, polling)


def handle_of(
    session: TaskRequester, created: Any, polling: TaskPolling | None = None
) -> TaskHandle:
    """The handle of a task a call made, given as the server sent it (e.g. the typed
    ``CreateTaskResult`` of the generated 2025-11-25 ``Client.call_tool(task=...)``)."""
    plain = msgspec.to_builtins(created)
    try:
        if session.era == "modern":
            info = modern_info(msgspec.convert(plain, DetailedTask))
        else:
            info = msgspec.convert(plain, LegacyCreated).task.info()
    except msgspec.ValidationError as exc:
        raise McpError(INTERNAL_ERROR, f"Invalid task: {exc}") from None
    return TaskHandle(session, info, polling=polling)


async def follow(session: TaskRequester, answer: Any) -> Any:
    """A plain call's answer: the task it became followed to its result."""
    if isinstance(answer, DetailedTask):
        return await TaskHandle(session, modern_info(answer)).result()
    return answer


async def list_tasks(session: TaskRequester) -> list[TaskInfo]:
    """Every task the server lists for this client (2025-11-25 ``tasks/list``, all pages
    up to ``TaskPolling.page_limit``)."""
    if session.session is None:
        raise RuntimeError("not connected")
    found: list[TaskInfo] = []
    cursor: str | None = None
    for _ in range(session.task_polling.page_limit):
        params = {"cursor": cursor} if cursor else {}
        page = await session.session.request("tasks/list", params, result=LegacyTaskList)
        found += [task.info() for task in page.tasks]
        cursor = page.next_cursor
        if not cursor:
            return found
    limit = session.task_polling.page_limit
    raise McpError(
        INTERNAL_ERROR, f"tasks/list went on past {limit} pages (TaskPolling.page_limit)"
    )


class TaskWatch:
    """Status notifications a client got, by task: what wakes a handle's poll early."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def seen(self, params: Any) -> None:
        plain = as_object(params)
        task_id = plain.get("taskId") if plain is not None else getattr(params, "task_id", None)
        event = self._events.get(task_id) if isinstance(task_id, str) else None
        if event is not None:
            event.set()

    async def wait(self, task_id: str, seconds: float) -> None:
        event = self._events.setdefault(task_id, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), seconds)
        except asyncio.TimeoutError:
            pass
        finally:
            self._events.pop(task_id, None)


__all__ = [
    "TaskCancelled",
    "TaskHandle",
    "TaskInfo",
    "TaskPolling",
    "TaskWatch",
    "call_tool_as_task",
    "follow",
    "handle_of",
    "list_tasks",
    "task_result_of",
]
