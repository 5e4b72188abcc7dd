"""Property-based tests: generated bindings against an independent JSON-Schema oracle.

Acceptance line: *schema-invalid input (wrong types, missing required fields, unknown tag,
wrong const) raises ``msgspec.ValidationError`` naming the JSON path, never another
exception; property-based tests over every version, valid and invalid instances.*

The oracle is the ``jsonschema`` library validating against the upstream schema of each
version with mcpgen's patches applied (``schema/patches.json``: upstream defects) and with
mcpgen's deliberate relaxations applied too, all read from ``schema/overrides.json``:

* ``optional_fields``: such fields are dropped from the ``required`` lists of the objects
  whose origin (``Tool``, ``Tool.inputSchema``, …) the rule's ``match`` glob selects;
* ``field_defaults``: a field with a protocol default is dropped from ``required`` where the
  default is itself a valid value of the property (``InputRequiredResult.resultType`` is the
  const ``"input_required"``, so absence there cannot mean ``"complete"``: it stays required);
* ``inherit_properties``: the same properties are added (``loader.inherit_properties``).

Format checking is off (the bindings do not check formats either). Instances come from a
strategy that reads the raw schema nodes (not our IR), are filtered through the oracle,
and are then mutated (a value replaced by one of another JSON type, a key removed, a string
such as a const/enum/tag value replaced by an unknown string, a number moved far off:
numeric consts and bounds); only mutants the oracle rejects count as invalid.

Properties, for every version and every schema definition:

* valid instance → decodes, and re-encodes to the input (plus protocol defaults);
* invalid instance → ``msgspec.ValidationError`` (nothing else), whose path is compatible
  with the mutation (see :func:`allowed_paths`; msgspec writes no path for an error at the
  root, which counts as ``$``); skipped for definitions every JSON value satisfies;
* arbitrary JSON fed to top-level unions → decodes or ``msgspec.ValidationError``.

Each property runs as one hypothesis test per (version, definition), inside one pytest test
per version: the schemas are fetched by a fixture, so the definitions are not known when
pytest collects. Each runs twice: ``quick`` (``QUICK_EXAMPLES`` per definition, in ``make
unit``: every definition of every distinct schema still meets each property) and ``full``
(``EXAMPLES``, every version, marked ``slow``: ``make test`` runs it). ``MCPGEN_PROPERTY_EXAMPLES`` sets
the examples per definition of the full run (a soak run: ``MCPGEN_PROPERTY_EXAMPLES=100``).
Bugs found are listed in ``KNOWN_BUGS``.
"""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import importlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import jsonschema
import msgspec
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from support.checkout import PINS, REPORT, VERSIONS
from mcpgen.generator.inherit import inherit_properties
from mcpgen.generator.loader import definitions_of
from mcpgen.generator.overrides import Overrides, load_overrides
from mcpgen.generator.patches import apply_patches, load_patches
from mcpgen.generator.pins import Pins

#: Examples per (version, definition) and property of the full run; raise it for a soak run.
EXAMPLES = int(os.environ.get("MCPGEN_PROPERTY_EXAMPLES", "10"))
#: The same, in the quick run of ``make unit`` (the simplest instance and one more).
QUICK_EXAMPLES = 2
#: The two runs of each property: the example count per definition.


def _distinct_schemas(versions: list[str]) -> list[str]:
    """``versions`` less those pinned to the very schema of an earlier one (``draft``
    while it equals the newest release): its bindings are that version's under another
    name (``test_repin`` holds this), so a quick run of it would check nothing new."""
    seen: set[str] = set()
    out = []
    for version in versions:
        digest = PINS.get(version).files["schema.json"]
        if digest not in seen:
            seen.add(digest)
            out.append(version)
    return out


#: (version, examples per definition) of each property: the quick run in ``make unit``,
#: the full run of every version under ``slow``.
RUNS = [
    *(pytest.param(v, QUICK_EXAMPLES, id=f"quick-{v}") for v in _distinct_schemas(VERSIONS)),
    *(pytest.param(v, EXAMPLES, id=f"full-{v}", marks=pytest.mark.slow) for v in VERSIONS),
]


def run_name(examples: int) -> str:
    """How the report names a run (the full run has the plain name)."""
    return " (quick run)" if examples == QUICK_EXAMPLES and examples != EXAMPLES else ""


#: Instance nesting depth after which only required keys and minimal arrays are drawn.
MAX_DEPTH = 4
#: Top-level unions fed arbitrary JSON (those a version defines).
TOP_LEVEL_UNIONS = (
    "JSONRPCMessage",
    "ClientRequest",
    "ServerRequest",
    "ClientResult",
    "ServerResult",
    "ClientNotification",
    "ServerNotification",
)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    # the inner test functions of all definitions look alike to hypothesis: a database
    # would replay one definition's saved examples against another
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)
#: Generator bugs found by these properties: (version, definition) → (the bug, which
#: instances it hits). Those instances are left out of the properties, so the rest of the
#: definition stays checked, and ``test_known_bug_reproductions`` keeps each bug visible
#: as a strict xfail. Fixing the bug makes that xfail pass (strict: the suite then fails),
#: which is the cue to delete the entry here and there.
KNOWN_BUGS: dict[tuple[str, str], tuple[str, Callable[[Any], bool]]] = {}
_VALIDATORS: dict[str, type[Any]] = {
    "draft-07": jsonschema.Draft7Validator,
    "2020-12": jsonschema.Draft202012Validator,
}
#: Keywords that do not constrain an instance.
_ANNOTATIONS = {"description", "title", "$comment", "examples", "default", "format", "$schema"}

Schema = dict[str, Any]
Path_ = tuple[str | int, ...]


# -- the oracle -------------------------------------------------------------------------


def _subschemas(node: Any, origin: str = "") -> Iterator[tuple[str, Schema]]:
    """Every schema node below (and including) ``node``, by keyword (not by walking dicts),
    with its origin as overrides spell it: ``Tool``, ``Tool.inputSchema``, ``X|0`` for the
    first ``anyOf`` member, ``X[]`` for items, ``X{}`` for additional properties; the parts
    of an ``allOf`` share the origin of the object they make up."""
    if not isinstance(node, dict):
        return
    yield origin, node
    for keyword, fmt in (("properties", "{}.{}"), ("$defs", "{1}"), ("definitions", "{1}")):
        for key, sub in (node.get(keyword) or {}).items():
            yield from _subschemas(sub, fmt.format(origin, key))
    for keyword, suffix in (("items", "[]"), ("additionalProperties", "{}")):
        yield from _subschemas(node.get(keyword), origin + suffix)
    for i, sub in enumerate(node.get("anyOf") or []):
        yield from _subschemas(sub, f"{origin}|{i}")
    for sub in node.get("allOf") or []:
        yield from _subschemas(sub, origin)


class Oracle:
    """One version's patched, relaxed schema: validation and raw nodes by name."""

    def __init__(self, version: str, dialect: str, doc: Schema, overrides: Overrides) -> None:
        apply_patches(doc, load_patches())
        self.version = version
        self.doc = doc
        self.key, self.defs = definitions_of(doc)
        self.cls = _VALIDATORS[dialect]
        self.cls.check_schema(doc)
        inherit_properties(self.defs, overrides.inherit_properties, version)
        #: field → protocol default, for this version
        self.defaults: dict[str, Any] = {
            d.field: d.value
            for d in overrides.field_defaults
            if not d.versions or version in d.versions
        }
        #: (origin, relaxed field) pairs, for the report
        self.relaxed: list[tuple[str, str]] = []
        for name, definition in self.defs.items():
            for origin, node in _subschemas(definition, name):
                required = node.get("required")
                if not isinstance(required, list):
                    continue
                optional = {
                    o.field
                    for o in overrides.optional_fields
                    if fnmatch.fnmatchcase(origin, o.match)
                }
                keep = [f for f in required if f not in optional and not self._defaulted(node, f)]
                self.relaxed += [(origin, f) for f in required if f not in keep]
                node["required"] = keep
        #: keys the decoder may add to an object that lacks them: defaults it relaxed
        self.filled = {f: self.defaults[f] for _, f in self.relaxed if f in self.defaults}
        self._validators: dict[str, Any] = {}
        self._shapes: dict[str, Any] = {}

    def _defaulted(self, node: Schema, field: str) -> bool:
        prop = (node.get("properties") or {}).get(field)
        if field not in self.defaults or not isinstance(prop, dict):
            return False
        return self.cls({**self.doc, **prop}).is_valid(self.defaults[field])

    @property
    def names(self) -> list[str]:
        return sorted(self.defs)

    def shape_validator(self, shape: Schema) -> Any:
        key = json.dumps(shape, sort_keys=True)
        validator = self._shapes.get(key)
        if validator is None:
            validator = self._shapes[key] = self.cls({**self.doc, **shape})
        return validator

    def shape_accepts(self, shape: Schema, instance: Any) -> bool:
        return self.shape_validator(shape).is_valid(instance)

    def shape_errors(self, shape: Schema, instance: Any) -> Iterator[Any]:
        return self.shape_validator(shape).iter_errors(instance)

    def ref(self, name: str) -> Schema:
        return {"$ref": f"#/{self.key}/{name}"}

    def is_valid(self, name: str, instance: Any) -> bool:
        validator = self._validators.get(name)
        if validator is None:
            validator = self.cls({**self.doc, **self.ref(name)})
            self._validators[name] = validator
        return validator.is_valid(instance)

    # -- reading nodes (shared by the strategy and the path check) -----------------------

    def deref(self, node: Schema) -> Schema:
        """``node`` with a leading ``$ref`` and any ``allOf`` folded in."""
        for _ in range(64):
            if "$ref" in node:
                target = self.defs[node["$ref"].rsplit("/", 1)[1]]
                rest = {k: v for k, v in node.items() if k != "$ref" and k not in _ANNOTATIONS}
                node = _merge(target, rest) if rest else target
            elif "allOf" in node:
                rest = {k: v for k, v in node.items() if k != "allOf"}
                for part in node["allOf"]:
                    rest = _merge(rest, self.deref(part))
                node = rest
            else:
                return node
        raise AssertionError(f"$ref cycle without nesting at {node}")

    def alternatives(self, node: Schema) -> tuple[list[Schema], bool]:
        """The concrete (no ``$ref``/``allOf``/``anyOf``) shapes ``node`` admits, and
        whether a union (``anyOf`` of two or more shapes) had to be resolved to get them.
        """
        node = self.deref(node)
        if "anyOf" not in node:
            return [node], False
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        out: list[Schema] = []
        # ``anyOf: [{required: [a]}, {required: [b]}]`` asks for a or b: not a union of shapes
        union = sum(1 for alt in node["anyOf"] if set(alt) - {"required"} - _ANNOTATIONS) > 1
        for alt in node["anyOf"]:
            shapes, nested = self.alternatives(_merge(rest, alt) if _constrains(rest) else alt)
            out += shapes
            union = union or nested
        return out, union


def _constrains(node: Schema) -> bool:
    return any(k not in _ANNOTATIONS for k in node)


def _merge(a: Schema, b: Schema) -> Schema:
    """Both constraints as one node (approximate: the oracle has the last word)."""
    out = dict(a)
    for k, v in b.items():
        if k not in out or k in _ANNOTATIONS:
            out[k] = v
        elif k == "properties":
            props = dict(out[k])
            for p, sub in v.items():
                props[p] = {"allOf": [props[p], sub]} if p in props else sub
            out[k] = props
        elif k == "required":
            out[k] = [*out[k], *(r for r in v if r not in out[k])]
        elif k == "type":
            left = out[k] if isinstance(out[k], list) else [out[k]]
            right = v if isinstance(v, list) else [v]
            both = [t for t in left if t in right or (t == "integer" and "number" in right)]
            out[k] = both or right
        elif k == "additionalProperties":
            out[k] = False if False in (out[k], v) else out[k]
        elif k == "anyOf":  # (x or y) and (z or w): every pair
            out[k] = [{"allOf": [x, y]} for x in out[k] for y in v]
        elif k == "allOf":
            out[k] = [*out[k], *v]
        else:
            out[k] = v
    return out


@pytest.fixture(scope="session")
def oracles(fetched: Path, pins: Pins) -> dict[str, Oracle]:
    overrides = load_overrides()
    return {
        v: Oracle(
            v,
            pins.get(v).dialect,
            json.loads((fetched / v / "schema.json").read_bytes()),
            overrides,
        )
        for v in VERSIONS
    }


# -- instances from raw schema nodes ----------------------------------------------------

_SMALL_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_ANY_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    | _SMALL_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_SMALL_TEXT, inner, max_size=3),
    max_leaves=6,
)
_EXTRA_KEYS = st.text("abxyz./_-", min_size=1, max_size=5)


def _kinds(node: Schema) -> list[str]:
    t = node.get("type")
    if isinstance(t, list):
        return list(t)
    if isinstance(t, str):
        return [t]
    if "properties" in node or "additionalProperties" in node or "required" in node:
        return ["object"]
    if "items" in node:
        return ["array"]
    return []


def _is_leaf(oracle: Oracle, node: Schema) -> bool:
    shapes, _ = oracle.alternatives(node)
    return all(
        "const" in s
        or "enum" in s
        or (_kinds(s) and "object" not in _kinds(s) and "array" not in _kinds(s))
        for s in shapes
    )


_BOOLEANS = st.booleans()


def draw_instance(draw: st.DrawFn, oracle: Oracle, node: Schema, depth: int = 0) -> Any:
    """A JSON value drawn from a raw schema node (usually valid; the oracle decides).

    A plain recursive function over one ``draw`` rather than nested strategies: building a
    strategy per schema node costs more than drawing from it.
    """
    node = oracle.deref(node)
    minimal = depth >= MAX_DEPTH
    if "anyOf" in node:
        alts = node["anyOf"]
        if minimal:
            alts = [a for a in alts if _is_leaf(oracle, a)] or alts
        alt = alts[draw(st.integers(0, len(alts) - 1))]
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        return draw_instance(draw, oracle, _merge(rest, alt) if _constrains(rest) else alt, depth)
    if "const" in node:
        return copy.deepcopy(node["const"])
    if "enum" in node:
        return copy.deepcopy(draw(st.sampled_from(node["enum"])))
    kinds = _kinds(node)
    if not kinds:
        return draw(_ANY_JSON)
    if minimal:
        kinds = [k for k in kinds if k not in ("object", "array")] or kinds
    kind = kinds[draw(st.integers(0, len(kinds) - 1))] if len(kinds) > 1 else kinds[0]
    if kind == "object":
        return _draw_object(draw, oracle, node, depth, minimal)
    if kind == "array":
        items = node.get("items")
        low = node.get("minItems", 0)
        high = node.get("maxItems", low + (0 if minimal else 2))
        size = draw(st.integers(low, max(low, min(high, low + 2))))
        if not isinstance(items, dict):
            return [draw(_ANY_JSON) for _ in range(size)]
        return [draw_instance(draw, oracle, items, depth + 1) for _ in range(size)]
    if kind == "string":
        low = node.get("minLength", 0)
        return draw(
            st.text(min_size=low, max_size=max(low, min(node.get("maxLength", 99), low + 6)))
        )
    if kind in ("integer", "number"):
        low = math.ceil(node["minimum"]) if "minimum" in node else -1000
        high = math.floor(node["maximum"]) if "maximum" in node else max(low, 0) + 1000
        ints = st.integers(low, high)
        if kind == "integer":
            return draw(ints)
        floats = st.floats(node.get("minimum", -1e6), node.get("maximum", 1e6), allow_nan=False)
        return draw(ints | floats)
    if kind == "boolean":
        return draw(_BOOLEANS)
    if kind == "null":
        return None
    raise AssertionError(f"{oracle.version}: unsupported type {kind!r}")


def _draw_object(draw: st.DrawFn, oracle: Oracle, node: Schema, depth: int, minimal: bool) -> Any:
    props: Schema = node.get("properties") or {}
    required = set(node.get("required") or [])
    out: dict[str, Any] = {}
    for key in sorted(props):
        if key in required or (not minimal and draw(_BOOLEANS)):
            out[key] = draw_instance(draw, oracle, props[key], depth + 1)
    for key in sorted(required - set(props)):
        out[key] = draw(_ANY_JSON)
    extra = node.get("additionalProperties")
    if extra is not False and not minimal:  # absent: the schema allows any other key
        for key in draw(st.lists(_EXTRA_KEYS, max_size=2, unique=True)):
            if key not in props:
                if isinstance(extra, dict) and _constrains(extra):
                    out[key] = draw_instance(draw, oracle, extra, depth + 1)
                else:
                    out[key] = draw(_ANY_JSON)
    return out


@st.composite
def valid_instances(draw: st.DrawFn, oracle: Oracle, name: str) -> Any:
    value = draw_instance(draw, oracle, oracle.ref(name))
    assume(oracle.is_valid(name, value))
    bug = KNOWN_BUGS.get((oracle.version, name))
    assume(bug is None or not bug[1](value))
    return value


# -- mutations --------------------------------------------------------------------------


def _walk(value: Any, path: Path_ = ()) -> Iterator[tuple[Path_, Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, (*path, i))


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_WRONG: tuple[Any, ...] = (None, True, 7, 0.5, "x", [], {})
UNKNOWN = "mcpgen-unknown-value"


@dataclass(frozen=True)
class Mutation:
    kind: str  # "wrong-type" | "drop-key" | "unknown-value" | "out-of-range"
    path: Path_  # of the value replaced, or of the key removed
    value: Any = None

    def apply(self, instance: Any) -> Any:
        if not self.path:
            return copy.deepcopy(self.value)
        out = copy.deepcopy(instance)
        parent = out
        for part in self.path[:-1]:
            parent = parent[part]
        if self.kind == "drop-key":
            del parent[self.path[-1]]
        else:
            parent[self.path[-1]] = copy.deepcopy(self.value)
        return out

    @property
    def target(self) -> Path_:
        """Where a decoder can notice it: the value, or the object that lost a key."""
        return self.path[:-1] if self.kind == "drop-key" else self.path


def mutations(instance: Any) -> dict[str, list[Mutation]]:
    out: dict[str, list[Mutation]] = {
        "wrong-type": [],
        "drop-key": [],
        "unknown-value": [],
        "out-of-range": [],
    }
    for path, value in _walk(instance):
        kind = _json_kind(value)
        out["wrong-type"] += [
            Mutation("wrong-type", path, w) for w in _WRONG if _json_kind(w) != kind
        ]
        if isinstance(value, dict):
            out["drop-key"] += [Mutation("drop-key", (*path, k)) for k in value]
        if isinstance(value, str) and value != UNKNOWN:
            out["unknown-value"].append(Mutation("unknown-value", path, UNKNOWN))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # off a numeric const (error codes) or a bound (minimum, maximum)
            out["out-of-range"] += [
                Mutation("out-of-range", path, value + d) for d in (-(10**6), 10**6)
            ]
    return {k: v for k, v in out.items() if v}


@st.composite
def invalid_instances(draw: st.DrawFn, oracle: Oracle, name: str) -> tuple[Any, Any, Mutation]:
    """(valid instance, mutant, mutation) with the mutant rejected by the oracle."""
    valid = draw(valid_instances(oracle, name))
    candidates = mutations(valid)
    kinds = sorted(candidates)
    first = draw(st.integers(0, len(kinds) - 1))
    # the drawn kind of mutation, else the next kind that yields an invalid instance
    for kind in kinds[first:] + kinds[:first]:
        options = candidates[kind]
        start = draw(st.integers(0, len(options) - 1))
        for i in range(min(len(options), 12)):
            mutation = options[(start + i) % len(options)]
            mutant = mutation.apply(valid)
            if not oracle.is_valid(name, mutant):
                return valid, mutant, mutation
    assume(False)
    raise AssertionError("unreachable")


# -- checks -----------------------------------------------------------------------------

_AT = re.compile(r" - at `(\$[^`]*)`")


def reported_path(message: str) -> str:
    """The JSON path of a ValidationError message; msgspec omits it at the root."""
    found = _AT.findall(message)
    assert len(found) <= 1, f"paths not merged into one: {message!r}"
    return found[0] if found else "$"


def render(path: Path_) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def names_path(reported: str, path: Path_) -> bool:
    """Whether ``reported`` spells ``path`` (msgspec writes ``[...]`` for a map key)."""

    def match(text: str, rest: Path_) -> bool:
        if not rest:
            return text == ""
        head, tail = rest[0], rest[1:]
        forms = [f"[{head}]"] if isinstance(head, int) else [f".{head}", "[...]"]
        return any(text.startswith(f) and match(text[len(f) :], tail) for f in forms)

    return reported.startswith("$") and match(reported[1:], path)


def _at(value: Any, path: Path_) -> Any:
    for part in path:
        value = value[part]
    return value


def _error_paths(errors: Iterator[Any]) -> Iterator[Path_]:
    """Instance paths of jsonschema errors and of the errors inside them (``anyOf``)."""
    for error in errors:
        yield tuple(error.absolute_path)
        yield from _error_paths(iter(error.context or ()))


def union_errors(oracle: Oracle, name: str, valid: Any, mutant: Any, target: Path_) -> list[Path_]:
    """Paths where the members of the unions on the way to ``target`` find errors.

    Walks from the root to ``target`` through the schema branches the *valid* instance
    takes; at each position where the schema has a union (``anyOf`` of shapes), validates
    the *mutant*'s value there against every member and collects the errors' paths.
    """
    frontier = [oracle.ref(name)]
    found_errors: list[Path_] = []
    for i in range(len(target) + 1):
        here = target[:i]
        shapes: list[Schema] = []
        for node in frontier:
            found, union = oracle.alternatives(node)
            shapes += [s for s in found if oracle.shape_accepts(s, _at(valid, here))] or found
            if union:
                for shape in found:
                    errors = oracle.shape_errors(shape, _at(mutant, here))
                    found_errors += [(*here, *p) for p in _error_paths(errors)]
        if i == len(target):
            break
        part = target[i]
        frontier = []
        for shape in shapes:
            if isinstance(part, int):
                child = shape.get("items")
            else:
                child = (shape.get("properties") or {}).get(part, shape.get("additionalProperties"))
            if isinstance(child, dict):
                frontier.append(child)
    return found_errors


def allowed_paths(
    oracle: Oracle, name: str, valid: Any, mutant: Any, mutation: Mutation
) -> list[Path_]:
    """Where the error may be reported for it to count as naming the mutation's path.

    * The mutation's *target*: the replaced value itself or, for a removed key, the object
      that lost it (msgspec says ``Object missing required field `k``` there).
    * For each union (``anyOf`` of shapes) enclosing the target, and only for those: any
      path where one of the union's members (per the oracle) finds an error in the mutant.
      A union picks its member from the value itself (JSON kind, discriminator value, key
      presence), so a mutant may be routed to another member than the one the valid
      instance matched (a removed key changes key-presence routing; an unknown tag
      matches no member) and fail where that member fails; and a union decoded by trial
      reports the deepest error of all its members, which may lie beside the mutation
      rather than on its path (``MultiSelectEnumSchema``: a broken ``type`` is reported at
      ``$.items``, where the titled member misses ``anyOf``). Everywhere else the path
      must be exactly the target's.
    """
    return [mutation.target, *union_errors(oracle, name, valid, mutant, mutation.target)]


def first_difference(out: Any, inp: Any, defaults: dict[str, Any], path: Path_ = ()) -> str | None:
    """Where ``out`` (re-encoded) differs from ``inp`` (the input), strictly by JSON kind,
    except that an object may gain a key with its protocol default (``field_defaults``).
    """
    if isinstance(inp, dict):
        if not isinstance(out, dict):
            return render(path)
        if inp.keys() - out.keys():
            return f"{render(path)} lost {sorted(inp.keys() - out.keys())}"
        for k in out.keys() - inp.keys():
            if k not in defaults or out[k] != defaults[k]:
                return f"{render(path)} gained {k!r}"
        for k in inp:
            diff = first_difference(out[k], inp[k], defaults, (*path, k))
            if diff:
                return diff
        return None
    if isinstance(inp, list):
        if not isinstance(out, list) or len(out) != len(inp):
            return render(path)
        for i, (o, v) in enumerate(zip(out, inp)):
            diff = first_difference(o, v, defaults, (*path, i))
            if diff:
                return diff
        return None
    numbers = {"integer", "number"}
    same_kind = _json_kind(out) == _json_kind(inp) or {_json_kind(out), _json_kind(inp)} <= numbers
    return None if same_kind and out == inp else f"{render(path)}: {out!r} != {inp!r}"


# -- properties -------------------------------------------------------------------------


def _shape(oracle: Oracle, name: str) -> str:
    shapes, union = oracle.alternatives(oracle.ref(name))
    if union:
        return "union"
    kinds = (
        set(_kinds(shapes[0]))
        if "const" not in shapes[0] and "enum" not in shapes[0]
        else {"literal"}
    )
    if kinds == {"object"}:
        return "object"
    if kinds == {"array"}:
        return "array"
    return "any" if not kinds else "scalar"


def carries_undeclared(types: ModuleType, value: Any) -> bool:
    """Whether a decoded value holds, anywhere, a key its definition does not declare."""
    if types.undeclared(value):
        return True
    if isinstance(value, list):
        return any(carries_undeclared(types, v) for v in value)
    if isinstance(value, dict):
        return any(carries_undeclared(types, v) for v in value.values())
    fields = getattr(value, "__struct_fields__", ())
    return any(carries_undeclared(types, getattr(value, f)) for f in fields)


def _check_valid(
    types: ModuleType, oracle: Oracle, name: str, stats: Counter[str], examples: int
) -> None:
    tp = types.DEFINITIONS[name]

    @settings(SETTINGS, max_examples=examples)
    @given(instance=valid_instances(oracle, name))
    def prop(instance: Any) -> None:
        data = json.dumps(instance).encode()
        note(f"{oracle.version} {name}: {data!r}")
        try:
            obj = types.decode(data, tp)
        except Exception as exc:
            raise AssertionError(
                f"{oracle.version} {name}: valid instance rejected: {exc!r}"
            ) from exc
        again = json.loads(types.encode(obj))
        diff = first_difference(again, instance, oracle.filled)
        assert diff is None, f"{oracle.version} {name}: round trip differs at {diff}"
        stats["valid"] += 1
        stats["with undeclared keys"] += carries_undeclared(types, obj)

    prop()


def _check_invalid(
    types: ModuleType, oracle: Oracle, name: str, stats: Counter[str], examples: int
) -> None:
    tp = types.DEFINITIONS[name]

    @settings(SETTINGS, max_examples=examples)
    @given(case=invalid_instances(oracle, name))
    def prop(case: tuple[Any, Any, Mutation]) -> None:
        valid, mutant, mutation = case
        data = json.dumps(mutant).encode()
        where = f"{oracle.version} {name}: {mutation.kind} at {render(mutation.path)}"
        note(f"{where}: {data!r}")
        try:
            types.decode(data, tp)
        except msgspec.ValidationError as exc:
            message = str(exc)
        except Exception as exc:
            raise AssertionError(
                f"{where}: {type(exc).__name__} instead of ValidationError: {exc}"
            ) from exc
        else:
            raise AssertionError(f"{where}: schema-invalid instance accepted")
        reported = reported_path(message)
        allowed = allowed_paths(oracle, name, valid, mutant, mutation)
        assert any(names_path(reported, p) for p in allowed), (
            f"{where}: error {message!r} reported at {reported}, "
            f"expected one of {sorted({render(p) for p in allowed})}"
        )
        exact = names_path(reported, mutation.target)
        if mutation.kind == "drop-key" and exact and mutation.target not in allowed[1:]:
            # no union member fails there: the error must be about the removed key
            assert f"`{mutation.path[-1]}`" in message, f"{where}: {message!r} names another key"
        stats[mutation.kind] += 1
        stats["exact path" if exact else "beside it, in a union"] += 1

    prop()


@pytest.mark.parametrize(("version", "examples"), RUNS)
def test_valid_instances_decode_and_round_trip(
    version: str, examples: int, generated: dict[str, ModuleType], oracles: dict[str, Oracle]
) -> None:
    oracle, types = oracles[version], generated[version]
    stats: Counter[str] = Counter()
    shapes = Counter(_shape(oracle, n) for n in oracle.names)
    for name in oracle.names:
        _check_valid(types, oracle, name, stats, examples)
    REPORT[f"properties, valid instances, {version}{run_name(examples)}"] = (
        f"{len(oracle.names)} definitions ({', '.join(f'{n} {k}' for k, n in sorted(shapes.items()))}), "
        f"{stats['valid']} instances ({stats['with undeclared keys']} with undeclared keys, kept), "
        f"relaxed required: {sorted(set(f for _, f in oracle.relaxed))}"
    )


def _check_reshape(
    generated: dict[str, ModuleType],
    oracle: Oracle,
    name: str,
    stats: Counter[str],
    examples: int,
) -> None:
    source = generated[oracle.version]
    tp = source.DEFINITIONS[name]
    targets = [
        (v, types, types.DEFINITIONS[name])
        for v, types in generated.items()
        if v != oracle.version and name in types.DEFINITIONS
    ]
    if not targets:
        return
    support = importlib.import_module(source.__name__.rsplit(".", 2)[0] + "._support")
    converted = support._converted

    @settings(SETTINGS, max_examples=examples)
    @given(instance=valid_instances(oracle, name))
    def prop(instance: Any) -> None:
        value = source.decode(json.dumps(instance).encode(), tp)
        plain = msgspec.to_builtins(value)
        foreseen = not carries_undeclared(source, value)
        for version, types, target in targets:
            where = f"{oracle.version} {name} → {version}"
            note(f"{where}: {plain!r}")
            with _counting(support) as slow:
                got = _outcome(lambda: types.reshape(plain, target, source=type(value)))
            want = _outcome(lambda: converted(plain, target, keep_undeclared=False))
            assert got == want, f"{where}: reshaped by plan differently"
            assert slow.runs == 0 or not foreseen, f"{where}: the slow path ran"
            stats["reshaped" if got[0] == "value" else "refused alike"] += 1
            stats["slow path (undeclared keys)"] += slow.runs

    prop()


class _Runs:
    runs = 0


@contextlib.contextmanager
def _counting(support: ModuleType) -> Iterator[_Runs]:
    """Counts the runs of the slow path of ``support`` (only a failed conversion leads
    there) while the block runs."""
    counter, keeping = _Runs(), support._keeping

    def counted(raw: Any, tp: Any, put_back: bool = True) -> Any:
        counter.runs += 1
        return keeping(raw, tp, put_back)

    setattr(support, "_keeping", counted)
    try:
        yield counter
    finally:
        setattr(support, "_keeping", keeping)


def _outcome(reshape: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("value", json.loads(msgspec.json.encode(reshape())))
    except msgspec.ValidationError as exc:
        return ("error", str(exc))


@pytest.mark.parametrize(("version", "examples"), RUNS)
def test_valid_instances_reshape_to_every_version_by_plan_as_before(
    version: str, examples: int, generated: dict[str, ModuleType], oracles: dict[str, Oracle]
) -> None:
    """A valid instance, decoded, made the same definition of every other version with
    its type given (dropped by plan) gives what reshaping without it gives (found by a
    failed conversion, then the slow path); the slow path runs only for keys no
    definition declares."""
    oracle = oracles[version]
    stats: Counter[str] = Counter()
    for name in oracle.names:
        _check_reshape(generated, oracle, name, stats, examples)
    REPORT[f"properties, reshaped by plan, {version}{run_name(examples)}"] = ", ".join(
        f"{k} {n}" for k, n in sorted(stats.items())
    )
    assert stats["reshaped"] > 0


#: A few values of every JSON kind: a definition that accepts them all accepts any JSON
#: value, so no invalid instance of it exists (``JSONValue`` once patched to admit null).
_PROBES: tuple[Any, ...] = (*_WRONG, [None, 0.5, {}], {"k": [True, "x", {"j": None}]})


@pytest.mark.parametrize(("version", "examples"), RUNS)
def test_invalid_instances_raise_validation_error_at_their_path(
    version: str, examples: int, generated: dict[str, ModuleType], oracles: dict[str, Oracle]
) -> None:
    oracle, types = oracles[version], generated[version]
    stats: Counter[str] = Counter()
    anything = [n for n in oracle.names if all(oracle.is_valid(n, p) for p in _PROBES)]
    for name in oracle.names:
        if name not in anything:
            _check_invalid(types, oracle, name, stats, examples)
    REPORT[f"properties, invalid instances, {version}{run_name(examples)}"] = (
        f"{len(oracle.names) - len(anything)} definitions "
        f"(any JSON value valid, skipped: {', '.join(anything) or 'none'}): "
        + ", ".join(f"{k} {n}" for k, n in sorted(stats.items()))
    )


def _vocabulary(oracle: Oracle) -> tuple[list[str], list[Any]]:
    keys: set[str] = set()
    values: list[Any] = []
    for _, node in _subschemas(oracle.doc):
        keys.update(node.get("properties") or {})
        if "const" in node:
            values.append(node["const"])
        values += node.get("enum") or []
    return sorted(keys), [v for i, v in enumerate(values) if v not in values[:i]]


def garbage(oracle: Oracle) -> st.SearchStrategy[Any]:
    """Arbitrary JSON, biased towards the schema's own keys and constants."""
    keys, values = _vocabulary(oracle)
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8)
        | st.sampled_from(values)
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), inner, max_size=6),
        max_leaves=24,
    )


@pytest.mark.parametrize(("version", "examples"), RUNS)
def test_arbitrary_json_decodes_or_raises_validation_error(
    version: str, examples: int, generated: dict[str, ModuleType], oracles: dict[str, Oracle]
) -> None:
    oracle, types = oracles[version], generated[version]
    names = [n for n in TOP_LEVEL_UNIONS if n in oracle.defs]
    assert {"JSONRPCMessage", "ServerResult", "ClientRequest"} <= set(names)
    outcomes: Counter[str] = Counter()
    for name in names:
        tp = types.DEFINITIONS[name]

        @settings(SETTINGS, max_examples=examples * 10)
        @given(value=garbage(oracle))
        def prop(value: Any) -> None:
            data = json.dumps(value).encode()
            try:
                types.decode(data, tp)
            except msgspec.ValidationError as exc:
                reported_path(str(exc))  # one merged path, or none at the root
                outcomes["rejected"] += 1
            except Exception as exc:
                raise AssertionError(f"{version} {name}: {type(exc).__name__}: {exc}") from exc
            else:
                outcomes["decoded"] += 1

        prop()
    REPORT[f"properties, arbitrary JSON, {version}{run_name(examples)}"] = (
        f"{', '.join(names)}: {outcomes['decoded']} decoded, {outcomes['rejected']} rejected"
    )


# -- bugs found ------------------------------------------------------------------------

_BATCHES = {
    "request batch": b'[{"jsonrpc":"2.0","method":"notifications/initialized"}]',
    "response batch": b'[{"jsonrpc":"2.0","id":1,"result":{}}]',
}


@pytest.mark.parametrize("batch", sorted(_BATCHES))
def test_batches_decode_as_jsonrpc_messages(
    batch: str, generated: dict[str, ModuleType], oracles: dict[str, Oracle]
) -> None:
    """Regression: 2025-03-26 JSONRPCMessage once rejected every batch (trial decoding of
    array members was unreachable, and inline unions in union members were not hoisted)."""
    types, data = generated["2025-03-26"], _BATCHES[batch]
    assert oracles["2025-03-26"].is_valid("JSONRPCMessage", json.loads(data))
    decoded = types.decode(data, types.JSONRPCMessage)
    assert json.loads(types.encode(decoded)) == json.loads(data)
