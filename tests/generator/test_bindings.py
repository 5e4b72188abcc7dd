"""The generated bindings decode every definition and round-trip every upstream example."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import msgspec
import pytest

from support.checkout import REPORT, VERSIONS


def test_a_decoder_builds_for_every_definition(
    generated: dict[str, ModuleType],
) -> None:
    counts = {}
    for version, types in generated.items():
        support = __import__(types.__name__.rsplit(".", 2)[0] + "._support", fromlist=["x"])
        for name, tp in types.DEFINITIONS.items():
            support.decoder(tp)  # raises if msgspec rejects the type graph
        assert set(types.DEFINITIONS) >= set(_schema_names(version)), "every schema name exposed"
        counts[version] = len(types.DEFINITIONS)
    REPORT["decoders built per version"] = ", ".join(f"{v}={n}" for v, n in counts.items())
    assert all(n > 70 for n in counts.values())


def _schema_names(version: str) -> list[str]:
    from mcpgen.generator.loader import definitions_of
    from mcpgen.generator.pins import schema_dir

    doc = json.loads((schema_dir() / version / "schema.json").read_bytes())
    return list(definitions_of(doc)[1])


def _examples(fetched: Path, version: str) -> list[Path]:
    return sorted((fetched / version / "examples").rglob("*.json"))


@pytest.mark.parametrize("version", VERSIONS)
def test_every_upstream_example_round_trips(
    version: str, generated: dict[str, ModuleType], fetched: Path
) -> None:
    types = generated[version]
    examples = _examples(fetched, version)
    ok = []
    for path in examples:
        original = json.loads(path.read_bytes())
        decoded = types.decode(path.read_bytes(), types.DEFINITIONS[path.parent.name])
        assert json.loads(types.encode(decoded)) == original, path
        ok.append(path)
    if examples:
        REPORT[f"examples round-tripped, {version}"] = f"{len(ok)}/{len(examples)}"
    assert len(ok) == len(examples)


def test_examples_exist_where_upstream_has_them(fetched: Path) -> None:
    assert len(_examples(fetched, "2026-07-28")) == 129
    assert len(_examples(fetched, "draft")) == 129


def test_invalid_input_names_the_json_path(generated: dict[str, ModuleType]) -> None:
    t = generated["2026-07-28"]
    cases = {
        b'{"resultType":"complete","content":[{"type":"text","text":5}]}': "$.content[0].text",
        b'{"resultType":"complete","content":[{"type":"nope"}]}': "$.content[0].type",
        b'{"resultType":"complete"}': "content",
        b'{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/x":1},'
        b'"structuredContent":{"a":[1]},"isError":"yes"}': "$.isError",
    }
    for data, where in cases.items():
        with pytest.raises(msgspec.ValidationError) as info:
            t.decode(data, t.CallToolResult)
        assert where in str(info.value)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.params\._meta\.io"):
        t.decode(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x",'
            b'"_meta":{"io.modelcontextprotocol/protocolVersion":1}}}',
            t.CallToolRequest,
        )
