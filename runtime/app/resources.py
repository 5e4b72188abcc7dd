"""Resources and resource templates from Python functions.

A resource is a URI and a function that reads it; a template (RFC 6570,
``notes://{folder}/{name}``) is a function whose parameters are the template's variables,
matched out of the URI a client reads and converted to the parameters' types. What the
function returns becomes the contents: ``str`` is text, ``bytes`` a blob, ``File`` either,
a list several, anything else its JSON; the version's own contents or a whole
``ReadResourceResult`` go as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from . import content as helpers
from .docstrings import parse
from ..core.errors import INVALID_PARAMS, McpError
from ..core.json_values import listed
from .schemas import Signature, call
from .uritemplate import UriTemplate


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
        self.fn = fn
        self.types = types
        self.name = name or fn.__name__
        self.mime_type = mime_type
        self.blocking = blocking
        doc = parse(fn.__doc__)
        self.signature = Signature.of(fn, f"{self.name}_variables", doc, context_type)
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
        if self.signature.params:
            raise TypeError(
                f"resource {uri!r}: {fn.__qualname__} takes {list(self.signature.params)}; "
                "only a template's variables can be parameters"
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
        self.template = UriTemplate(template)
        params = set(self.signature.params)
        variables = set(self.template.variables)
        required = set(self.signature.schema.get("required", ()))
        if variables - params or required - variables:
            raise TypeError(
                f"resource template {template!r}: its variables {sorted(variables)} must be "
                f"{fn.__qualname__}'s parameters (which have {sorted(params)})"
            )
        self.definition = types.convert(self.listing, types.ResourceTemplate)

    def match(self, uri: str) -> dict[str, Any] | None:
        """The variables of ``uri``, or None when the template does not produce it."""
        return self.template.match(uri)
