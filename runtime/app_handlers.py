"""The ``ServerHandlers`` an :class:`~runtime.app.App` serves with: each request answered
from the app's registries. A kind of thing the app has none of gets no handler, so the
server's capabilities follow what is registered."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from .errors import INVALID_PARAMS, McpError, resource_not_found
from .pages import page
from .plain import as_object

if TYPE_CHECKING:
    from .app import App

#: Most values one completion answer carries (the spec's bound).
MAX_COMPLETIONS = 100


def _cursor(params: Any) -> str | None:
    cursor = getattr(params, "cursor", None)
    return cursor if isinstance(cursor, str) else None


def _paged(app: App, items: Sequence[Any], params: Any, key: str, result: type) -> Any:
    """A list result of ``items``' definitions, one page of it."""
    shown, after = page(items, _cursor(params), app.page_size)
    fields: dict[str, Any] = {key: [item.definition for item in shown]}
    if after is not None:
        fields["next_cursor"] = after
    return result(**fields)


def _unknown(what: str, name: str, path: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Unknown {what}: {name}", {"path": path})


def handlers_class(app: App, base: type) -> type:
    """A subclass of ``base`` (the binding's ``ServerHandlers``) answering from ``app``."""
    types = app.types
    methods: dict[str, Callable[..., Any]] = {}
    if app.tools:

        async def list_tools(_: Any, params: Any, ctx: Any) -> Any:
            return _paged(app, list(app.tools.values()), params, "tools", types.ListToolsResult)

        def call_tool(_: Any, params: Any, ctx: Any) -> Awaitable[Any]:
            # The tool's own coroutine is the handler's: no frame of this one in between.
            tool = app.tools.get(params.name)
            if tool is None:
                raise _unknown("tool", params.name, "$.params.name")
            return tool.call(params.arguments, ctx)

        methods.update(list_tools=list_tools, call_tool=call_tool)
    if app.prompts:

        async def list_prompts(_: Any, params: Any, ctx: Any) -> Any:
            prompts = list(app.prompts.values())
            return _paged(app, prompts, params, "prompts", types.ListPromptsResult)

        async def get_prompt(_: Any, params: Any, ctx: Any) -> Any:
            prompt = app.prompts.get(params.name)
            if prompt is None:
                raise _unknown("prompt", params.name, "$.params.name")
            arguments = as_object(params.arguments)
            return await prompt.get(arguments, ctx)

        methods.update(list_prompts=list_prompts, get_prompt=get_prompt)
    if app.resources or app.templates:

        async def list_resources(_: Any, params: Any, ctx: Any) -> Any:
            resources = list(app.resources.values())
            return _paged(app, resources, params, "resources", types.ListResourcesResult)

        async def list_resource_templates(_: Any, params: Any, ctx: Any) -> Any:
            templates = list(app.templates.values())
            return _paged(
                app, templates, params, "resource_templates", types.ListResourceTemplatesResult
            )

        async def read_resource(_: Any, params: Any, ctx: Any) -> Any:
            uri = params.uri
            resource = app.resources.get(uri)
            if resource is not None:
                return await resource.read(uri, {}, ctx)
            for template in app.templates.values():
                variables = template.match(uri)
                if variables is not None:
                    return await template.read(uri, variables, ctx)
            raise resource_not_found(uri)

        async def subscribe(_: Any, params: Any, ctx: Any) -> Any:
            """Only to a URI a resource has or a template matches (the runtime records the
            session's subscription, within its limits)."""
            uri = params.uri
            if uri not in app.resources and not any(
                template.match(uri) is not None for template in app.templates.values()
            ):
                raise resource_not_found(uri)
            return {}

        async def unsubscribe(_: Any, params: Any, ctx: Any) -> Any:
            return {}  # from anything: a resource removed since is let go of too

        methods.update(
            list_resources=list_resources,
            list_resource_templates=list_resource_templates,
            read_resource=read_resource,
            subscribe=subscribe,
            unsubscribe=unsubscribe,
        )
    if app.completions:

        async def complete(_: Any, params: Any, ctx: Any) -> Any:
            ref, argument = params.ref, params.argument
            if isinstance(ref, types.PromptReference):
                kind, target = "prompt", ref.name
                if target not in app.prompts:
                    raise _unknown("prompt", target, "$.params.ref.name")
            else:
                kind, target = "resource", str(getattr(ref, "uri", ""))
                if target not in app.resources and target not in app.templates:
                    raise _unknown("resource", target, "$.params.ref.uri")
            complete = app.completions.get((kind, target, argument.name))
            values: list[str] = []
            if complete is not None:
                context = getattr(params, "context", None)
                given = getattr(context, "arguments", None)
                values = list(await complete(argument.value, dict(given or {})))
            completion: dict[str, Any] = {
                "values": values[:MAX_COMPLETIONS],
                "total": len(values),
                "has_more": len(values) > MAX_COMPLETIONS,
            }
            return types.CompleteResult(completion=types.CompleteResultCompletion(**completion))

        methods.update(complete=complete)
    name = "".join(c if c.isalnum() else "_" for c in app.name).title().replace("_", "")
    return type(f"{name or 'App'}Handlers", (base,), methods)
