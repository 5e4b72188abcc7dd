"""Prompts from typed Python functions: arguments from parameters, messages from what
the function returns.

Prompt arguments travel as strings; a parameter typed otherwise (``count: int``) is
converted from its string (``"3"`` → 3) by msgspec's lax mode, and one that cannot be is
-32602 naming the argument. A function returns a ``str`` (one user message), a list of
messages (``str``, ``(role, content)`` pairs, content helpers or the version's
``PromptMessage``), or a whole ``GetPromptResult``.
"""

from __future__ import annotations

import inspect
import types as types_module
import typing
from collections.abc import Callable, Mapping
from typing import Any, cast

import msgspec

from . import content as helpers
from .docstrings import parse
from ..core.errors import INVALID_PARAMS, McpError
from ..core.json_values import listed
from .schemas import (
    RegistrationError,
    Signature,
    bare,
    call,
    label,
    name_of,
    options_of,
    type_hints,
    type_text,
)

#: What a prompt function may return, for the message refusing anything else.
PROMPT_RESULTS = (
    "return str (one user message), a list of messages (each a str, a (role, content) "
    "pair, Image, Audio, File, a content block or a PromptMessage) or a GetPromptResult"
)


class RegisteredPrompt:
    """One prompt: its listing and how to get it."""

    def __init__(
        self,
        fn: Callable[..., Any],
        types: Any,
        context_type: type | None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        blocking: bool = False,
    ) -> None:
        self.name = name_of(fn, "prompt", name)
        what = label("prompt", self.name, fn)
        self.fn = fn
        self.types = types
        self.blocking = blocking
        doc = parse(fn.__doc__)
        self.signature = Signature.of(
            fn, f"{self.name}_arguments", doc, context_type, what, strings=True
        )
        returns = type_hints(fn, what).get("return", Any)
        if not _messages(returns, types):
            raise RegistrationError(
                f"{what}: it returns {type_text(returns)}, which makes no messages; {PROMPT_RESULTS}"
            )
        properties = self.signature.schema.get("properties", {})
        required = set(self.signature.schema.get("required", ()))
        arguments: list[dict[str, Any]] = []
        for argument in self.signature.params:
            entry: dict[str, Any] = {"name": argument, "required": argument in required}
            described = properties.get(argument, {}).get("description")
            if described:
                entry["description"] = described
            arguments.append(entry)
        listing: dict[str, Any] = {"name": self.name}
        for key, value in (
            ("arguments", arguments or None),
            ("title", title),
            ("description", description or doc.summary),
            ("icons", [dict(i) for i in icons] if icons else None),
            ("_meta", dict(meta) if meta else None),
        ):
            if value is not None:
                listing[key] = value
        self.definition = types.convert(listing, types.Prompt)

    async def get(self, arguments: Mapping[str, Any] | None, ctx: Any) -> Any:
        """The prompt's messages for ``arguments`` (-32602 when they do not fit)."""
        try:
            kwargs = self.signature.arguments(arguments, ctx, strict=False)
        except msgspec.ValidationError as exc:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid arguments for prompt {self.name!r}: {exc}",
                {"prompt": self.name, "detail": str(exc)},
            ) from None
        value = await call(self.fn, kwargs, self.blocking)
        return self.result(value)

    def result(self, value: Any) -> Any:
        types = self.types
        if isinstance(value, types.GetPromptResult):
            return value
        items = listed(value)
        return types.GetPromptResult(messages=[self._message(item) for item in items])

    def _message(self, item: Any) -> Any:
        types = self.types
        if isinstance(item, types.PromptMessage):
            return item
        role = "user"
        pair = cast("tuple[Any, ...]", item) if isinstance(item, tuple) else ()
        if len(pair) == 2:
            role, item = pair
        return types.PromptMessage(role=role, content=self._content(item))

    def _content(self, item: Any) -> Any:
        types = self.types
        if isinstance(item, str):
            return types.TextContent(text=item)
        if isinstance(item, helpers.Helper):
            uri = f"mcp-prompt://{self.name}/content"
            return types.convert(helpers.block(item, uri), types.ContentBlock)
        return item


OPTIONS = options_of(RegisteredPrompt)
_UNIONS = (typing.Union, types_module.UnionType)


def _messages(tp: Any, types: Any) -> bool:
    """Whether a prompt function returning ``tp`` makes messages (what ``result`` takes)."""
    tp = bare(tp)
    if tp is Any or tp is inspect.Signature.empty:
        return True
    if typing.get_origin(tp) in _UNIONS:
        return all(_messages(a, types) for a in typing.get_args(tp))
    if tp is list or typing.get_origin(tp) is list:
        return all(_message(a, types) for a in typing.get_args(tp))
    if isinstance(tp, type) and issubclass(tp, types.GetPromptResult):
        return True
    return _message(tp, types)


def _message(tp: Any, types: Any) -> bool:
    """Whether ``tp`` is one message: content, a (role, content) pair, a PromptMessage."""
    tp = bare(tp)
    if typing.get_origin(tp) in _UNIONS:
        return all(_message(a, types) for a in typing.get_args(tp))
    if tp is tuple or typing.get_origin(tp) is tuple:
        pair = typing.get_args(tp)
        return not pair or (len(pair) == 2 and _role(pair[0]) and _content(pair[1], types))
    if isinstance(tp, type) and issubclass(tp, types.PromptMessage):
        return True
    return _content(tp, types)


def _role(tp: Any) -> bool:
    tp = bare(tp)
    if typing.get_origin(tp) is typing.Literal:
        return all(isinstance(a, str) for a in typing.get_args(tp))
    return tp in (str, Any)


def _content(tp: Any, types: Any) -> bool:
    tp = bare(tp)
    if typing.get_origin(tp) in _UNIONS:
        return all(_content(a, types) for a in typing.get_args(tp))
    blocks = (*helpers.Helper, *typing.get_args(types.ContentBlock))
    return tp in (str, Any) or (isinstance(tp, type) and issubclass(tp, blocks))
