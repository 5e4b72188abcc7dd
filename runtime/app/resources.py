"""Resources and resource templates from Python functions.

A resource is a URI and a function that reads it; a template (RFC 6570,
``notes://{folder}/{name}``) is a function whose parameters are the template's variables,
matched out of the URI a client reads and converted to the parameters' types. What the
function returns becomes the contents: ``str`` is text, ``bytes`` a blob, ``File`` either,
a list several, anything else its JSON; the version's own contents or a whole
``ReadResourceResult`` go as they are.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from . import content as helpers
from .docstrings import parse
from ..core.errors import INVALID_PARAMS, McpError
from ..core.json_values import listed
from .schemas import (
    JSON_TYPES,
    RegistrationError,
    Signature,
    call,
    carried,
    from_string,
    label,
    leaves,
    options_of,
    type_hints,
    type_text,
    unsupported,
)
from .uritemplate import UriTemplate

#: What a resource function may return, for the messages refusing anything else.
RESOURCE_RESULTS = (
    "return str (text), bytes or File (a blob), a list of them, the version's "
    f"ResourceContents or ReadResourceResult, or data sent as JSON ({JSON_TYPES})"
)


def is_template(uri: str) -> bool:
    """Whether ``uri`` is an RFC 6570 template rather than one resource's URI."""
    return "{" in uri


class _Readable:
    """What resources and templates share: a function, its listing, its contents."""

    def __init__(
        self,
        fn: Callable[..., Any],
        types: Any,
        context_type: type | None,
        listing: dict[str, Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        annotations: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
        blocking: bool = False,
    ) -> None:
        template = listing.get("uriTemplate")
        where = str(template if template is not None else listing["uri"])
        what = label("resource template" if template is not None else "resource", where, fn)
        #: How registration errors name it.
        self.what = what
        if not callable(fn):
            raise RegistrationError(f"{what}: {fn!r} is not a function; decorate one")
        self.fn = fn
        self.types = types
        self.name = name or getattr(fn, "__name__", None) or type(fn).__name__
        self.mime_type = mime_type
        self.blocking = blocking
        doc = parse(fn.__doc__)
        self.signature = Signature.of(fn, f"{self.name}_variables", doc, context_type, what)
        returns = type_hints(fn, what).get("return", Any)
        wrong = _no_contents(returns, types)
        if wrong is not None:
            raise RegistrationError(f"{what}: {wrong}; {RESOURCE_RESULTS}")
        listing["name"] = self.name
        for key, value in (
            ("title", title),
            ("description", description or doc.summary),
            ("mimeType", mime_type),
            ("icons", [dict(i) for i in icons] if icons else None),
            ("annotations", dict(annotations) if annotations else None),
            ("_meta", dict(meta) if meta else None),
        ):
            if value is not None:
                listing[key] = value
        self.listing = listing

    async def read(self, uri: str, variables: Mapping[str, Any], ctx: Any) -> Any:
        """The contents at ``uri`` (``variables``: what a template matched in it)."""
        try:
            kwargs = self.signature.arguments(variables, ctx, strict=False)
        except msgspec.ValidationError as exc:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: {uri} does not fit resource {self.name!r}: {exc}",
                {"uri": uri},
            ) from None
        value = await call(self.fn, kwargs, self.blocking)
        return self.contents(uri, value)

    def contents(self, uri: str, value: Any) -> Any:
        """``value`` as this version's ``ReadResourceResult``."""
        types = self.types
        if isinstance(value, types.ReadResourceResult):
            return value
        items = listed(value)
        return types.convert(
            {"contents": [self._one(uri, item) for item in items]}, types.ReadResourceResult
        )

    def _one(self, uri: str, item: Any) -> Any:
        types = self.types
        if isinstance(item, (types.TextResourceContents, types.BlobResourceContents)):
            return msgspec.to_builtins(item)
        if isinstance(item, (str, bytes)):
            fallback = "text/plain" if isinstance(item, str) else "application/octet-stream"
            return helpers.resource_contents(uri, item, self.mime_type or fallback)
        if isinstance(item, helpers.File):
            return helpers.resource_contents(item.uri or uri, item.data, item.mime_type)
        text = msgspec.json.encode(item).decode()
        return helpers.resource_contents(uri, text, self.mime_type or "application/json")


class RegisteredResource(_Readable):
    """One resource at a fixed URI."""

    def __init__(
        self,
        uri: str,
        fn: Callable[..., Any],
        types: Any,
        context_type: type | None,
        **options: Any,
    ) -> None:
        super().__init__(fn, types, context_type, {"uri": uri}, **options)
        params = self.signature.params
        if params:
            raise RegistrationError(
                f"{self.what}: the function takes {', '.join(params)}, but a resource at a "
                f"fixed URI is read with no arguments; make the URI a template "
                f"('{uri}/{{{params[0]}}}') or drop the parameters"
            )
        self.uri = uri
        self.definition = types.convert(self.listing, types.Resource)


class RegisteredTemplate(_Readable):
    """A resource template: the URIs it matches, read by one function."""

    def __init__(
        self,
        template: str,
        fn: Callable[..., Any],
        types: Any,
        context_type: type | None,
        **options: Any,
    ) -> None:
        super().__init__(fn, types, context_type, {"uriTemplate": template}, **options)
        try:
            self.template = UriTemplate(template)
        except ValueError as exc:
            raise RegistrationError(f"{self.what}: {exc}") from None
        self._check_variables()
        self.definition = types.convert(self.listing, types.ResourceTemplate)

    def _check_variables(self) -> None:
        """Each variable is a parameter typed for what the template yields (a string, a
        list of strings when exploded), and each parameter is a variable or has a default."""
        what = self.what
        params = self.signature.params
        for variable in self.template.variables:
            if variable not in params:
                raise RegistrationError(
                    f"{what}: the template's variable {variable!r} is no parameter of the "
                    f"function (which takes {', '.join(params) or 'none'}); add a parameter "
                    f"{variable} or rename one"
                )
        required = self.signature.schema.get("required", ())
        for param in params:
            if param in required and param not in self.template.variables:
                raise RegistrationError(
                    f"{what}: parameter {param!r} is no variable of the template, so no URI "
                    f"gives it a value; put {{{param}}} in the template or give it a default"
                )
        fields = {f.name: f.type for f in msgspec.structs.fields(self.signature.args_type)}
        for variable in self.template.variables:
            exploded = variable in self.template.exploded
            if not from_string(fields[variable], listed=exploded):
                given = "a list of strings (it is exploded)" if exploded else "a string"
                typed = "list[str]" if exploded else "str (or int, float, bool, a Literal, an Enum)"
                raise RegistrationError(
                    f"{what}: parameter {variable!r} is typed {fields[variable]!r}, but the "
                    f"URI gives it {given}; type it {typed} and parse the rest in the function"
                )

    def match(self, uri: str) -> dict[str, Any] | None:
        """The variables of ``uri``, or None when the template does not produce it."""
        return self.template.match(uri)


OPTIONS = options_of(_Readable)


def _no_contents(returns: Any, types: Any) -> str | None:
    """What is wrong with a resource function's return annotation, or None: a type JSON
    cannot carry, or a tool's or prompt's content, which is no resource contents."""
    tools_and_prompts = (
        helpers.Image,
        helpers.Audio,
        *typing.get_args(types.ContentBlock),
        types.PromptMessage,
        types.GetPromptResult,
        types.CallToolResult,
    )
    as_they_are = (
        str,
        bytes,
        helpers.File,
        types.TextResourceContents,
        types.BlobResourceContents,
        types.ReadResourceResult,
    )
    for leaf in leaves(returns):
        if isinstance(leaf, type) and issubclass(leaf, as_they_are):
            continue
        if isinstance(leaf, type) and issubclass(leaf, tools_and_prompts):
            return (
                f"it returns {type_text(returns)}, and {leaf.__qualname__} is a tool's or "
                "prompt's content, no resource contents"
            )
        bad = unsupported(leaf, encoded=True)
        if bad is not None:
            return carried("its result", returns, bad)
    return None
