"""Dispatch tables agree with the schemas they were generated from."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

import pytest

from support.checkout import REPORT, VERSIONS
from mcpgen.generator.loader import definitions_of
from mcpgen.generator.overrides import load_overrides

UNIONS = {
    "ClientRequest": ("request", "client", "wire"),
    "ServerRequest": ("request", "server", "wire"),
    "ClientNotification": ("notification", "client", "wire"),
    "ServerNotification": ("notification", "server", "wire"),
    "InputRequest": ("request", "server", "input"),
}


def members(defs: dict, name: str) -> list[str]:
    node = defs.get(name)
    if node is None:
        return []
    if "anyOf" in node:
        return [m["$ref"].rsplit("/", 1)[1] for m in node["anyOf"]]
    if "$ref" in node:
        return [node["$ref"].rsplit("/", 1)[1]]
    return [name]  # 2026 ClientNotification: an inlined CancelledNotification (patched)


def methods_module(generated: dict[str, ModuleType], version: str) -> ModuleType:
    return importlib.import_module(generated[version].__name__.rsplit(".", 1)[0] + ".methods")


@pytest.mark.parametrize("version", VERSIONS)
def test_each_union_member_appears_exactly_once(
    version: str, generated: dict[str, ModuleType], fetched: Path
) -> None:
    table = methods_module(generated, version).METHODS
    _, defs = definitions_of(json.loads((fetched / version / "schema.json").read_bytes()))
    expected = []
    for union, (kind, sender, channel) in UNIONS.items():
        for member in members(defs, union):
            if member == "ClientNotification":
                member = "CancelledNotification"
            expected.append((member, kind, sender, channel))
    seen = [(m.message.__name__, m.kind, m.direction, m.channel) for m in table]
    assert sorted(seen) == sorted(expected)
    assert len(set(seen)) == len(seen)
    REPORT[f"methods, {version}"] = f"{len(table)} rows"


@pytest.mark.parametrize("version", VERSIONS)
def test_every_request_has_params_and_result_types(
    version: str, generated: dict[str, ModuleType]
) -> None:
    module = methods_module(generated, version)
    types = generated[version]
    exceptions = {e.method: e.result for e in load_overrides().result_exceptions}
    support = importlib.import_module(types.__name__.rsplit(".", 2)[0] + "._support")
    for spec in module.METHODS:
        if spec.params is not None:
            support.decoder(spec.params)  # every params type decodes
        if spec.kind == "request":
            assert spec.result is not None, spec.name
            name = getattr(spec.result, "__name__", "")
            if spec.name in exceptions:
                assert (
                    name == exceptions[spec.name]
                    or types.DEFINITIONS[exceptions[spec.name]] is spec.result
                )
            elif version >= "2026-07-28" and spec.channel == "wire":
                assert spec.message.__name__[: -len("Request")] in name  # from *ResultResponse
            else:
                assert name == spec.message.__name__[: -len("Request")] + "Result"
        else:
            assert spec.result is None
        assert spec.handler.isidentifier()


def test_known_gates_and_result_exceptions(generated: dict[str, ModuleType]) -> None:
    legacy = methods_module(generated, "2025-11-25")
    modern = methods_module(generated, "2026-07-28")
    assert legacy.CLIENT_REQUESTS["tools/call"].capability == ("tools",)
    assert legacy.CLIENT_REQUESTS["resources/subscribe"].capability == (
        "resources",
        "subscribe",
    )
    assert legacy.SERVER_REQUESTS["sampling/createMessage"].capability == ("sampling",)
    assert legacy.CLIENT_REQUESTS["ping"].result.__name__ == "Result"  # EmptyResult is Result
    assert (
        methods_module(generated, "2024-11-05").CLIENT_REQUESTS["completion/complete"].capability
        is None
    )
    assert "sampling/createMessage" not in modern.SERVER_REQUESTS
    assert set(modern.INPUT_REQUESTS) == {
        "sampling/createMessage",
        "roots/list",
        "elicitation/create",
    }
    assert (
        "initialize" not in modern.CLIENT_REQUESTS and "server/discover" in modern.CLIENT_REQUESTS
    )
