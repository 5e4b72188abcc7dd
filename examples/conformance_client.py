"""A client for the official conformance suite: ``python -m examples.conformance_client URL``.

The suite runs it once per scenario with ``MCP_CONFORMANCE_SCENARIO`` set (and
``MCP_CONFORMANCE_PROTOCOL_VERSION``, ``MCP_CONFORMANCE_CONTEXT`` where relevant); each
scenario expects the client to exercise particular requests. Everything protocol-level
(era, headers, SSE resumption, input-required rounds, authorization) is the runtime's.

``auth/*`` scenarios connect with ``runtime.client.auth.oauth``: the client credentials grant for
``auth/client-credentials-*`` (the context gives the client id and its secret or private
key), else the authorization code flow, whose authorization step the headless authorizer
completes (the suite's authorization server redirects at once); a client id in the context
is a pre-registered client, and the suite's Client ID Metadata Document URL is offered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

from mcpgen.generated.v2026_07_28 import client as mcp
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime.client import http_client
from mcpgen.runtime.client.auth import ClientCredentials, ClientMetadata, HeadlessAuthorizer, OAuth

log = logging.getLogger("conformance-client")


class Handlers(mcp.ClientHandlers):
    """Answers what servers ask: elicitation accepts with the schema's defaults filled in."""

    async def elicit(self, params: t.ElicitRequestParams, ctx: Any) -> t.ElicitResult:
        content: dict[str, Any] = {}
        if isinstance(params, t.ElicitRequestFormParams):
            schema = json.loads(t.encode(params.requested_schema))
            for name, prop in (schema.get("properties") or {}).items():
                content[name] = _answer_for(name, prop)
        return t.ElicitResult(action="accept", content=content)

    async def create_message(
        self, params: t.CreateMessageRequestParams, ctx: Any
    ) -> t.CreateMessageResult:
        return t.CreateMessageResult(
            role="assistant",
            content=t.TextContent(text="This is a response from the client"),
            model="mcpgen",
        )

    async def list_roots(self, params: Any, ctx: Any) -> t.ListRootsResult:
        return t.ListRootsResult(roots=[t.Root(uri="file:///tmp", name="tmp")])


#: The Client ID Metadata Document URL the suite expects (its AS accepts it as it is).
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def _auth_for(scenario: str, context: dict[str, Any]) -> Any:
    """The authorization an ``auth/*`` scenario calls for (None for the others)."""
    if not scenario.startswith("auth/"):
        return None
    if scenario == "auth/client-credentials-jwt":
        return ClientCredentials(
            context["client_id"],
            private_key=context["private_key_pem"],
            algorithm=context.get("signing_algorithm", "ES256"),
        )
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(context["client_id"], client_secret=context["client_secret"])
    return OAuth(
        authorizer=HeadlessAuthorizer(),
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CIMD_URL,
        client_metadata=ClientMetadata(client_name="mcpgen conformance client"),
    )


def _answer_for(name: str, prop: dict[str, Any]) -> Any:
    if "default" in prop:
        return prop["default"]
    if "enum" in prop and prop["enum"]:
        return prop["enum"][0]
    samples: dict[str, Any] = {"boolean": True, "integer": 1, "number": 1}
    return samples.get(str(prop.get("type")), f"{name} value")


def _arguments_for(tool: t.Tool) -> dict[str, Any]:
    """Arguments that satisfy a tool's required properties (numbers for numbers)."""
    schema = json.loads(t.encode(tool.input_schema))
    properties = schema.get("properties") or {}
    args: dict[str, Any] = {}
    for name in schema.get("required") or []:
        samples: dict[str, Any] = {"number": 1, "integer": 1, "boolean": True}
        args[name] = samples.get(str((properties.get(name) or {}).get("type")), "x")
    return args


async def run(url: str, scenario: str) -> None:
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    mode = "modern" if version.startswith("2026") else "legacy" if version else "auto"
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth = _auth_for(scenario, context)
    async with http_client(mcp.Client, url, handlers=Handlers(), mode=mode, auth=auth) as client:
        tools = (await client.list_tools()).tools
        names = {tool.name: tool for tool in tools}
        if scenario == "tools_call" and "add_numbers" in names:
            await client.call_tool(name="add_numbers", arguments={"a": 2, "b": 3})
        elif scenario == "http-custom-headers":
            for call in context.get("toolCalls", []):
                await client.call_tool(name=call["name"], arguments=call.get("arguments") or {})
        elif scenario == "json-schema-2020-12-preservation" and "json_schema_echo" in names:
            source = names.get("json_schema_2020_12_tool")
            schema = json.loads(t.encode(source.input_schema)) if source else {}
            await client.call_tool(name="json_schema_echo", arguments={"schema": schema})
        elif scenario == "http-standard-headers":
            for tool in tools:
                await client.call_tool(name=tool.name, arguments=_arguments_for(tool))
            for resource in (await client.list_resources()).resources:
                await client.read_resource(uri=resource.uri)
            for prompt in (await client.list_prompts()).prompts:
                await client.get_prompt(name=prompt.name)
        elif scenario in ("initialize", "request-metadata", "json-schema-ref-no-deref"):
            pass  # connecting and listing tools is the whole scenario
        else:  # call every listed tool (sse-retry, elicitation defaults, request state, …)
            for tool in tools:
                try:
                    await client.call_tool(name=tool.name, arguments=_arguments_for(tool))
                except Exception as exc:  # keep going: later calls may be what is checked
                    log.warning("%s failed: %s", tool.name, exc)


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    logging.getLogger("mcpgen").setLevel(logging.DEBUG)
    if len(sys.argv) != 2:
        sys.exit("usage: python -m examples.conformance_client URL")
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    asyncio.run(asyncio.wait_for(run(sys.argv[1], scenario), 60))


if __name__ == "__main__":
    main()
