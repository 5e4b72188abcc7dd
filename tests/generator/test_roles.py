"""The runtime and templates find the definitions they rely on by role (where the protocol
carries them), not by name: a revision that renames ``ClientCapabilities``,
``Implementation`` and ``TextContent`` generates bindings whose capability gates, open
capabilities, ``Context`` properties, ``App`` results and diff all work unchanged."""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import pytest

from support.checkout import VERSIONS
from mcpgen.generator.diff import diff
from mcpgen.generator.fetch import read_schema
from mcpgen.generator.methods import capability_paths
from mcpgen.generator.pipeline import build_ir
from mcpgen.runtime import App
from support.app_scenarios import MODES
from support.revisions import edited_ir, imported, inputs_with

RENAMES = {"ClientCapabilities": "ClientCaps", "Implementation": "PeerInfo", "TextContent": "Prose"}
#: Each copy's name (later than every real one) → the pinned schema it renames: the
#: newest, and the newest of the legacy era, so that both eras are served.
COPIES = {"2099-06-30": "draft", "2099-01-31": "2025-11-25"}


def renamed(document: Any) -> Any:
    """``document`` with the definitions of ``RENAMES`` renamed, every ``$ref`` followed."""
    text = json.dumps(document)
    for old, new in RENAMES.items():
        text = text.replace(f'"#/$defs/{old}"', f'"#/$defs/{new}"')
    out = json.loads(text)
    out["$defs"] = {RENAMES.get(k, k): v for k, v in out["$defs"].items()}
    return out


class Copy(NamedTuple):
    original: Any
    copy: Any
    original_doc: Any
    copy_doc: Any


@pytest.fixture(scope="module")
def copies(fetched: Path) -> dict[str, Copy]:
    inputs = inputs_with(COPIES)
    built = {}
    for name, source in COPIES.items():
        original_doc = json.loads(read_schema(source, inputs.pins))
        original = build_ir(source, inputs, json.dumps(original_doc).encode())
        copy = edited_ir(inputs, name, source, renamed)
        built[name] = Copy(original, copy, original_doc, renamed(original_doc))
    return built


@pytest.fixture(scope="module")
def copy_types(
    copies: dict[str, Copy], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Both copies generated as a package of their own, and their types imported."""
    modules = {name: c.copy for name, c in copies.items()}
    out = tmp_path_factory.mktemp("renamed")
    with imported(out, "renamed_bindings", modules, inputs_with(COPIES)) as types:
        yield types


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_maps_each_role_to_the_definition_of_that_name(
    version: str, generated: dict[str, ModuleType]
) -> None:
    types = generated[version]
    for role, found in types.ROLES.items():
        assert found is getattr(types, role, found), (version, role)
    assert {"ClientCapabilities", "ServerCapabilities", "Implementation"} <= types.ROLES.keys()
    assert {"TextContent", "CallToolResult", "ContentBlock", "LoggingLevel"} <= types.ROLES.keys()


@pytest.mark.parametrize("name", COPIES)
def test_roles_follow_the_renamed_definitions(copies: dict[str, Copy], name: str) -> None:
    original, copy = copies[name].original, copies[name].copy
    expected = {
        role: RENAMES.get(name, name)
        for role in dict(original.roles)
        if (name := original.role(role))
    }
    assert {role: copy.role(role) for role in dict(copy.roles)} == expected
    for side in ("client", "server"):
        assert capability_paths(copy, side) == capability_paths(original, side)
        assert capability_paths(copy, side)  # non-empty: the role was found


@pytest.mark.parametrize("name", COPIES)
def test_capability_gates_and_the_dispatch_table_are_unchanged(
    copies: dict[str, Copy], name: str
) -> None:
    original, copy = copies[name].original, copies[name].copy
    assert copy.methods == original.methods
    assert any(m.capability for m in copy.methods)


@pytest.mark.parametrize("name", COPIES)
def test_the_diff_sees_three_renames_and_no_capability_change(
    copies: dict[str, Copy], name: str
) -> None:
    original, copy, original_doc, copy_doc = copies[name]
    changes = diff(original, copy, documents=(original_doc, copy_doc))
    assert changes.capabilities == type(changes.capabilities)((), (), ())
    assert changes.methods == type(changes.methods)((), (), ())
    # the renamed definitions, and the inline objects named after them, and nothing else
    removed, added = set(changes.definitions.removed), set(changes.definitions.added)
    assert set(RENAMES) <= removed
    assert added == {
        next(new + name[len(old) :] for old, new in RENAMES.items() if name.startswith(old))
        for name in removed
    }


@pytest.mark.parametrize("name", COPIES)
def test_the_renamed_capabilities_stay_open(copy_types: dict[str, Any], name: str) -> None:
    t = copy_types[name]
    assert t.ROLES["ClientCapabilities"] is t.ClientCaps
    raw = b'{"sampling":{},"x-vendor":{"level":3}}'
    caps = t.decode(raw, t.ClientCaps)
    assert json.loads(t.encode(caps)) == json.loads(raw)  # the undeclared key survives
    assert not hasattr(t, "ClientCapabilities") and not hasattr(t, "TextContent")


def test_an_app_on_the_renamed_bindings_serves_in_both_eras(copy_types: dict[str, Any]) -> None:
    types = copy_types["2099-06-30"]
    server_module = importlib.import_module(types.__name__.rsplit(".", 1)[0] + ".server")
    app = App("renamed", binding=server_module)
    seen: dict[str, Any] = {}

    def who(ctx: Any) -> str:
        """Say who is calling."""
        seen["caps"] = ctx.client_capabilities
        seen["info"] = ctx.client_info
        return f"hello {ctx.client_info.name}"

    who.__annotations__.update(ctx=server_module.Context, **{"return": str})  # not a string
    app.add_tool(who)

    async def scenario(mode: str) -> tuple[Any, dict[str, Any]]:
        options = {"name": "caller", "capabilities": {"roots": {}}, "mode": mode}
        async with app.test_client(**options) as client:
            result = await client.call_tool(name="who", arguments={})
            return result, client.session.server_capabilities

    for mode in MODES:
        seen.clear()
        result, advertised = asyncio.run(scenario(mode))
        assert isinstance(result.content[0], types.Prose), mode
        assert result.content[0].text == "hello caller"
        assert isinstance(seen["caps"], types.ClientCaps) and "roots" in seen["caps"]
        assert isinstance(seen["info"], types.PeerInfo)
        assert "tools" in advertised, (mode, advertised)  # the server's capabilities gate
