"""Reshaping by plan (``_reshape.py``): a value of one version's type made another version's
type gives what reshaping gave before the plans (a conversion, then the slow path of
``_undeclared.py`` on a key the target lacks), for every upstream example and every pair of
versions, and on the common path (a value of a generated type, its source type known) the
conversion succeeds at its first try: the slow path, which only an exception leads to,
never runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from support.checkout import REPORT, VERSIONS
from mcpgen.generated import _reshape, _support
from mcpgen.generated.v2024_11_05 import types as t24
from mcpgen.generated.v2025_03_26 import types as t25
from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import Server

#: The versions whose upstream schemas come with examples.
WITH_EXAMPLES = ("2026-07-28", "draft")
CLIENT = {"name": "test-reshape", "version": "1"}


class SlowPath:
    """Counts the runs of the slow path, which only a conversion that raised leads to."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs = 0
        keeping = _support._keeping

        def counted(raw: Any, tp: Any, put_back: bool = True) -> Any:
            self.runs += 1
            return keeping(raw, tp, put_back)

        monkeypatch.setattr(_support, "_keeping", counted)


@pytest.fixture
def slow_path(monkeypatch: pytest.MonkeyPatch) -> SlowPath:
    return SlowPath(monkeypatch)


def outcome(reshape: Any) -> tuple[str, str, bytes | str]:
    """What a reshape gave: the type's name and the JSON, or the error's words."""
    try:
        value = reshape()
    except msgspec.ValidationError as exc:
        return ("error", "", str(exc))
    return ("value", type(value).__name__, _support.encode(value))


def before(plain: Any, tp: Any) -> tuple[str, str, bytes | str]:
    """Reshaping as it was before the plans: convert, and on the first key the target
    lacks, the slow path."""
    return outcome(lambda: _support._converted(plain, tp, keep_undeclared=False))


def slow(plain: Any, tp: Any) -> tuple[str, str, bytes | str]:
    """The slow path alone, from the start."""
    return outcome(lambda: _support._keeping(plain, tp, put_back=False))


def examples(fetched: Path, version: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((fetched / version / "examples").rglob("*.json")):
        yield path.parent.name, path


@pytest.mark.parametrize("version", WITH_EXAMPLES)
def test_every_upstream_example_reshapes_to_every_version_as_before(
    version: str, generated: dict[str, ModuleType], fetched: Path, slow_path: SlowPath
) -> None:
    """Each example, decoded at its version, then made each version's type (directly, and
    by way of each other version: older to newer too), gives what reshaping gave before."""
    origin = generated[version]
    counts = {"reshaped": 0, "refused alike": 0}
    for name, path in examples(fetched, version):
        decoded = origin.decode(path.read_bytes(), origin.DEFINITIONS[name])
        for via, middle in generated.items():
            if name not in middle.DEFINITIONS:
                continue
            value = decoded
            if via != version:
                try:
                    value = middle.reshape(msgspec.to_builtins(decoded), middle.DEFINITIONS[name])
                except msgspec.ValidationError:
                    continue  # the version cannot express this example
            plain = msgspec.to_builtins(value)
            for target, types in generated.items():
                tp = types.DEFINITIONS.get(name)
                if tp is None:
                    continue
                slow_path.runs = 0
                got = outcome(lambda: types.reshape(plain, tp, source=type(value)))
                where = f"{path.name}: {via} → {target}"
                assert slow_path.runs == 0, f"{where}: the slow path ran"
                assert got == before(plain, tp) == slow(plain, tp), where
                counts["reshaped" if got[0] == "value" else "refused alike"] += 1
    REPORT[f"examples reshaped by plan, from {version}"] = ", ".join(
        f"{n} {k}" for k, n in counts.items()
    )
    assert counts["reshaped"] > 1000


def test_the_plan_drops_what_the_older_version_lacks_at_every_depth() -> None:
    result = t.CallToolResult(
        content=[
            t.TextContent(
                text="a",
                meta={"k": 1},
                annotations=t.Annotations(priority=1, last_modified="2026-01-01T00:00:00Z"),
            ),
            t.ImageContent(data="AA==", mime_type="image/png"),
        ],
        structured_content={"a": 1},
    )
    plain = msgspec.to_builtins(result)
    untouched = json.dumps(plain)
    step = _reshape.plan(t.CallToolResult, t24.CallToolResult)
    assert step is not None
    assert step(plain) == {
        "content": [
            {"type": "text", "annotations": {"priority": 1}, "text": "a"},
            {"type": "image", "data": "AA==", "mimeType": "image/png"},
        ]
    }
    assert json.dumps(plain) == untouched  # the value itself is left alone: copies changed
    assert plain["content"][1] is step(plain)["content"][1]  # and nothing else is copied
    assert _reshape.plan(t.CallToolResult, t24.CallToolResult) is step  # worked out once


def test_a_2026_result_reaches_each_older_version_without_the_slow_path(
    slow_path: SlowPath, generated: dict[str, ModuleType]
) -> None:
    result = t.CallToolResult(content=[t.TextContent(text="a")], structured_content={"a": 1})
    plain = msgspec.to_builtins(result)
    assert plain["resultType"] == "complete"
    for version in VERSIONS[:4]:
        older = generated[version]
        value = older.reshape(plain, older.CallToolResult, source=t.CallToolResult)
        assert "resultType" not in json.loads(older.encode(value))
    assert slow_path.runs == 0
    t24.reshape(plain, t24.CallToolResult)  # without its source: found by failing
    assert slow_path.runs == 1


def test_nothing_to_drop_is_no_plan_and_a_plain_dict_gets_none() -> None:
    assert _reshape.plan(t.CallToolResult, t.CallToolResult) is None
    assert _reshape.plan(dict, t24.CallToolResult) is None
    assert _reshape.plan(t.CallToolResult, list[dict[str, Any]]) is None


def test_keys_the_plan_did_not_foresee_take_the_slow_path_to_the_same_result(
    slow_path: SlowPath,
) -> None:
    data = {"content": [{"type": "text", "text": "a", "x-lang": "en"}], "x-top": 1}
    value = t.convert({**data, "resultType": "complete"}, t.CallToolResult)
    assert t.undeclared(value) == {"x-top": 1}  # a class made to carry it
    plain = msgspec.to_builtins(value)
    slow_path.runs = 0
    got = outcome(lambda: t24.reshape(plain, t24.CallToolResult, source=type(value)))
    assert slow_path.runs == 1
    assert got == before(plain, t24.CallToolResult)
    assert json.loads(got[2]) == {"content": [{"type": "text", "text": "a"}]}


def test_keys_a_plan_drops_are_not_undeclared_keys_and_do_not_count_against_the_limit(
    slow_path: SlowPath,
) -> None:
    """300 titled tools to a version without titles: the slow path counted each title it
    dropped as an undeclared key, and refused the list past 256; a plan knows them."""
    schema = t.convert({"type": "object"}, t.ToolInputSchema)
    tools = [t.Tool(name=f"t{i}", title=f"T{i}", input_schema=schema) for i in range(300)]
    plain = msgspec.to_builtins(t.ListToolsResult(tools=tools))
    listed = t25.reshape(plain, t25.ListToolsResult, source=t.ListToolsResult)
    assert [tool.name for tool in listed.tools] == [f"t{i}" for i in range(300)]
    assert "title" not in json.loads(t25.encode(listed))["tools"][0]
    assert slow_path.runs == 0
    with pytest.raises(msgspec.ValidationError, match="more than 256 keys"):
        t25.reshape(plain, t25.ListToolsResult)  # without its source, as before


def test_a_value_the_target_cannot_express_is_refused_in_the_same_words(
    slow_path: SlowPath,
) -> None:
    result = t.CallToolResult(content=[t.AudioContent(data="AA==", mime_type="audio/wav")])
    plain = msgspec.to_builtins(result)
    got = outcome(lambda: t24.reshape(plain, t24.CallToolResult, source=t.CallToolResult))
    assert slow_path.runs == 0
    assert got[0] == "error" and "$.content[0]" in str(got[2])
    assert got == before(plain, t24.CallToolResult)


def test_recursive_types_plan_and_reshape_as_before(slow_path: SlowPath) -> None:
    """An elicitation form (schemas of unions of structs, a map of them) from 2026-07-28
    to 2025-06-18, which lacks the titled and multi-select enums."""
    from mcpgen.generated.v2025_06_18 import types as t18

    form = {
        "mode": "form",
        "message": "Who?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "default": "x"},
                "size": {"type": "string", "enum": ["s", "m"], "default": "s"},
                "ok": {"type": "boolean", "default": True},
            },
            "required": ["name"],
        },
    }
    value = t.convert(form, t.ElicitRequestFormParams)
    plain = msgspec.to_builtins(value)
    target = t18.ElicitRequestParams
    slow_path.runs = 0
    got = outcome(lambda: t18.reshape(plain, target, source=type(value)))
    assert slow_path.runs == 0
    assert got[0] == "value" and got == before(plain, target)


def test_a_newer_answer_to_an_older_peer_takes_no_slow_path_on_the_wire(
    slow_path: SlowPath,
) -> None:
    """Through the runtime: a 2026-07-28 result answered to a 2024-11-05 session."""
    conn = Server(s.ServerHandlers(), name="reshape").connection()
    hello = {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": CLIENT}
    conn.receive(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}))
    conn.receive(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    result = t.CallToolResult(
        content=[t.TextContent(text="{}", meta={"k": 1})], structured_content={}
    )
    frame = json.loads(conn.result(1, result, "tools/call"))
    assert frame["result"] == {"content": [{"type": "text", "text": "{}"}]}
    assert slow_path.runs == 0
