"""RFC 6570 URI templates: expansion against the RFC's own examples, matching on MCP's
typical resource templates, and the round trip ``match(expand(v)) == v`` over generated
templates and values (the domain is the one ``runtime/app/uritemplate.py`` documents)."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mcpgen.runtime.app.uritemplate import UriTemplate, Value

# --- Expansion: RFC 6570 ------------------------------------------------------------------

#: Section 1.2's level 1-4 examples and section 3's: one set of variables serves all.
RFC_VALUES: dict[str, Value] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": [],
    "undef": None,
}

RFC_EXAMPLES = {
    # 1.2, level 1 to 3 (level 4's are all in section 3 below)
    "{var}": "value",
    "{hello}": "Hello%20World%21",
    "{+var}": "value",
    "{+hello}": "Hello%20World!",
    "{+path}/here": "/foo/bar/here",
    "here?ref={+path}": "here?ref=/foo/bar",
    "X{#var}": "X#value",
    "X{#hello}": "X#Hello%20World!",
    "map?{x,y}": "map?1024,768",
    "X{.x,y}": "X.1024.768",
    # 3.2.1 Variable expansion
    "{count}": "one,two,three",
    "{count*}": "one,two,three",
    "{/count}": "/one,two,three",
    "{/count*}": "/one/two/three",
    "{;count}": ";count=one,two,three",
    "{;count*}": ";count=one;count=two;count=three",
    "{?count}": "?count=one,two,three",
    "{?count*}": "?count=one&count=two&count=three",
    "{&count*}": "&count=one&count=two&count=three",
    # 3.2.2 Simple string expansion
    "{half}": "50%25",
    "O{empty}X": "OX",
    "O{undef}X": "OX",
    "{x,y}": "1024,768",
    "{x,hello,y}": "1024,Hello%20World%21,768",
    "?{x,empty}": "?1024,",
    "?{x,undef}": "?1024",
    "?{undef,y}": "?768",
    "{var:3}": "val",
    "{var:30}": "value",
    "{list}": "red,green,blue",
    "{list*}": "red,green,blue",
    "{keys}": "semi,%3B,dot,.,comma,%2C",
    "{keys*}": "semi=%3B,dot=.,comma=%2C",
    # 3.2.3 Reserved expansion
    "{+half}": "50%25",
    "{base}index": "http%3A%2F%2Fexample.com%2Fhome%2Findex",
    "{+base}index": "http://example.com/home/index",
    "O{+empty}X": "OX",
    "O{+undef}X": "OX",
    "up{+path}{var}/here": "up/foo/barvalue/here",
    "{+x,hello,y}": "1024,Hello%20World!,768",
    "{+path,x}/here": "/foo/bar,1024/here",
    "{+path:6}/here": "/foo/b/here",
    "{+list}": "red,green,blue",
    "{+list*}": "red,green,blue",
    "{+keys}": "semi,;,dot,.,comma,,",
    "{+keys*}": "semi=;,dot=.,comma=,",
    # 3.2.4 Fragment expansion
    "{#var}": "#value",
    "{#hello}": "#Hello%20World!",
    "{#half}": "#50%25",
    "foo{#empty}": "foo#",
    "foo{#undef}": "foo",
    "{#x,hello,y}": "#1024,Hello%20World!,768",
    "{#path,x}/here": "#/foo/bar,1024/here",
    "{#path:6}/here": "#/foo/b/here",
    "{#list}": "#red,green,blue",
    "{#list*}": "#red,green,blue",
    "{#keys}": "#semi,;,dot,.,comma,,",
    "{#keys*}": "#semi=;,dot=.,comma=,",
    # 3.2.5 Label expansion with dot-prefix
    "{.who}": ".fred",
    "{.half,who}": ".50%25.fred",
    "www{.dom*}": "www.example.com",
    "X{.var}": "X.value",
    "X{.empty}": "X.",
    "X{.undef}": "X",
    "X{.var:3}": "X.val",
    "X{.list}": "X.red,green,blue",
    "X{.list*}": "X.red.green.blue",
    "X{.keys}": "X.semi,%3B,dot,.,comma,%2C",
    "X{.keys*}": "X.semi=%3B.dot=..comma=%2C",
    "X{.empty_keys}": "X",
    "X{.empty_keys*}": "X",
    # 3.2.6 Path segment expansion
    "{/who}": "/fred",
    "{/half,who}": "/50%25/fred",
    "{/who,dub}": "/fred/me%2Ftoo",
    "{/var}": "/value",
    "{/var,empty}": "/value/",
    "{/var,undef}": "/value",
    "{/var,x}/here": "/value/1024/here",
    "{/list}": "/red,green,blue",
    "{/list*}": "/red/green/blue",
    "{/list*,path:4}": "/red/green/blue/%2Ffoo",
    "{/keys}": "/semi,%3B,dot,.,comma,%2C",
    "{/keys*}": "/semi=%3B/dot=./comma=%2C",
    # 3.2.7 Path-style parameter expansion
    "{;who}": ";who=fred",
    "{;half}": ";half=50%25",
    "{;empty}": ";empty",
    "{;v,empty,who}": ";v=6;empty;who=fred",
    "{;v,bar,who}": ";v=6;who=fred",
    "{;x,y}": ";x=1024;y=768",
    "{;x,y,empty}": ";x=1024;y=768;empty",
    "{;x,y,undef}": ";x=1024;y=768",
    "{;hello:5}": ";hello=Hello",
    "{;list}": ";list=red,green,blue",
    "{;list*}": ";list=red;list=green;list=blue",
    "{;keys}": ";keys=semi,%3B,dot,.,comma,%2C",
    "{;keys*}": ";semi=%3B;dot=.;comma=%2C",
    # 3.2.8 Form-style query expansion
    "{?who}": "?who=fred",
    "{?half}": "?half=50%25",
    "{?x,y}": "?x=1024&y=768",
    "{?x,y,empty}": "?x=1024&y=768&empty=",
    "{?x,y,undef}": "?x=1024&y=768",
    "{?var:3}": "?var=val",
    "{?list}": "?list=red,green,blue",
    "{?list*}": "?list=red&list=green&list=blue",
    "{?keys}": "?keys=semi,%3B,dot,.,comma,%2C",
    "{?keys*}": "?semi=%3B&dot=.&comma=%2C",
    # 3.2.9 Form-style query continuation
    "{&who}": "&who=fred",
    "{&half}": "&half=50%25",
    "?fixed=yes{&x}": "?fixed=yes&x=1024",
    "{&x,y,empty}": "&x=1024&y=768&empty=",
    "{&x,y,undef}": "&x=1024&y=768",
    "{&var:3}": "&var=val",
    "{&list}": "&list=red,green,blue",
    "{&list*}": "&list=red&list=green&list=blue",
    "{&keys}": "&keys=semi,%3B,dot,.,comma,%2C",
    "{&keys*}": "&semi=%3B&dot=.&comma=%2C",
}

#: RFC examples that name one variable twice: this module refuses those templates, since
#: a match could not give the variable two values.
RFC_DUPLICATES = ["{.who,who}", "{/who,who}", "{/var:1,var}"]


@pytest.mark.parametrize("template", RFC_EXAMPLES)
def test_rfc_examples_expand(template: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == RFC_EXAMPLES[template]


@pytest.mark.parametrize("template", RFC_DUPLICATES)
def test_rfc_examples_with_a_variable_twice_are_refused(template: str) -> None:
    with pytest.raises(ValueError, match="appears twice"):
        UriTemplate(template)


def test_expand_details() -> None:
    assert UriTemplate("{x}").expand({}) == ""
    assert UriTemplate("{x}").expand({"x": "ü €/ 😀"}) == "%C3%BC%20%E2%82%AC%2F%20%F0%9F%98%80"
    assert UriTemplate("{+x}").expand({"x": "%41%zz ü"}) == "%41%25zz%20%C3%BC"
    assert UriTemplate("{+x:2}").expand({"x": "%41%42%43"}) == "%41%42"  # triplets kept whole
    assert UriTemplate("{x:2}").expand({"x": "üüü"}) == "%C3%BC%C3%BC"  # characters, not octets
    assert UriTemplate("{x*}").expand({"x": ("a", "b")}) == "a,b"
    assert UriTemplate("{?x*}").expand({"x": {"a": "", "b": "1"}}) == "?a=&b=1"
    assert UriTemplate("{;x*}").expand({"x": [""]}) == ";x"
    # Literals outside the URI character set are percent-encoded; triplets are kept.
    assert UriTemplate("a b%20<{x}>").expand({"x": "1"}) == "a%20b%20%3C1%3E"
    assert UriTemplate("{x}").variables == ("x",)
    assert UriTemplate("a{/b,c*}{?d}{&e:3}").variables == ("b", "c", "d", "e")
    with pytest.raises(ValueError, match="composite"):
        UriTemplate("{keys:1}").expand(RFC_VALUES)
    with pytest.raises(TypeError):
        UriTemplate("{x}").expand({"x": 3})  # type: ignore[dict-item]


MALFORMED = {
    "{/id*": "position 0: unclosed '{'",
    "a{b{c}": "position 1: unclosed '{'",
    "/id*}": "position 4: '}' without an opening '{'",
    "x{}": "position 1: empty expression",
    "{/?id}": "position 2: expected a variable name, found '?'",
    "{var:prefix}": "position 5: a prefix length",
    "{var:0}": "position 5: a prefix length",
    "{var:10000}": "position 9: unexpected '0'",
    "{hello:2*}": "position 8: unexpected '*'",
    "{??hello}": "position 2: expected a variable name, found '?'",
    "{!hello}": "position 1: operator '!' is reserved",
    "{=path}": "position 1: operator '=' is reserved",
    "{|var*}": "position 1: operator '|' is reserved",
    "{$var}": "position 1: '$' is neither an operator nor a variable name",
    "{*keys?}": "position 1: '*' is neither",
    "{?empty=default,var}": "position 7: unexpected '='",
    "/h{#hello+}": "position 9: unexpected '+'",
    "{;keys:1*}": "position 8: unexpected '*'",
    "/people/{~thing}": "position 9: '~' is neither",
    "/sparql{?query){&default-graph-uri*}": "position 7: unclosed '{'",
    "/resolution{?x, y}": "position 15: expected a variable name, found ' '",
    "{a.}": "position 2: unexpected '.'",
    "{.a..b}": "position 3: unexpected '.'",
    "{x,}": "position 3: expected a variable name, found nothing",
    "{a}/{b}/{a}": "position 8: variable 'a' appears twice",
}


@pytest.mark.parametrize("template", MALFORMED)
def test_malformed_templates_name_the_position(template: str) -> None:
    with pytest.raises(ValueError, match=re.escape(MALFORMED[template])):
        UriTemplate(template)


# --- Matching -------------------------------------------------------------------------------

MATCHES: list[tuple[str, str, dict[str, str | list[str]] | None]] = [
    ("file:///{path}", "file:///notes.txt", {"path": "notes.txt"}),
    ("file:///{path}", "file:///a%2Fb%20c.txt", {"path": "a/b c.txt"}),
    ("file:///{path}", "file:///a/b.txt", None),  # {path} is one segment: {+path} is not
    ("file:///{path}", "file:///", None),  # an empty path is no path
    ("file:///{+path}", "file:///a/b.txt", {"path": "a/b.txt"}),
    ("test://template/{id}/data", "test://template/42/data", {"id": "42"}),
    ("test://template/{id}/data", "test://template/42/data/", None),
    ("test://template/{id}/data", "test://template//data", None),
    ("test://template/{id}/data", "test://template/4/2/data", None),
    ("test://template/{id}/data", "test://other/42/data", None),
    ("weather://{city}/current{?units}", "weather://Paris/current", {"city": "Paris"}),
    (
        "weather://{city}/current{?units}",
        "weather://Z%C3%BCrich/current?units=metric",
        {"city": "Zürich", "units": "metric"},
    ),
    (  # unknown parameters are ignored
        "weather://{city}/current{?units}",
        "weather://Oslo/current?lang=no&units=si",
        {"city": "Oslo", "units": "si"},
    ),
    ("weather://{city}/current{?units}", "weather://Oslo/current?units=a&units=b", None),
    ("weather://{city}/current{?units}", "weather://Oslo/current#top", None),
    ("weather://{city}/current{?units}", "weather://Oslo/forecast", None),
    (
        "repo://{owner}/{repo}/issues/{+path}",
        "repo://octo/cat/issues/src/a%20b.py",
        {"owner": "octo", "repo": "cat", "path": "src/a b.py"},
    ),
    ("repo://{owner}/{repo}/issues/{+path}", "repo://octo/cat/issues/", None),
    ("repo://{owner}/{repo}/issues/{+path}", "repo://octo/issues/x", None),
    ("users{/id*}{?fields*}", "users", {}),
    ("users{/id*}{?fields*}", "users/7", {"id": ["7"]}),
    (
        "users{/id*}{?fields*}",
        "users/7/8?fields=name&fields=mail&x=1",
        {"id": ["7", "8"], "fields": ["name", "mail"]},
    ),
    ("users{/id*}{?fields*}", "users?fields=", {"fields": [""]}),
    ("users{/id*}{?fields*}", "users/7#x", None),
    ("users{/id*}{?fields*}", "Users/7", None),
    # Every operator; several variables; prefixes.
    ("{x,y}", "1024,768", {"x": "1024", "y": "768"}),
    ("{x,y}", "1024", {"x": "1024"}),
    ("{x,y}", "a,b,c", {"x": "a", "y": "b,c"}),
    ("{list}", "red,green", {"list": "red,green"}),  # not exploded: a string
    ("{list*}", "red,green", {"list": ["red", "green"]}),
    ("{+path:6}/here", "/foo/b/here", {"path": "/foo/b"}),
    ("{+path:6}/here", "/foo/ba/here", None),  # longer than the prefix allows
    ("{+path}/here", "/a/here/b/here", {"path": "/a/here/b"}),  # "/here" ends the URI
    ("{+path}/here{?q}", "/a/here/b/here", None),  # the next "/here"; "/b/here" is left
    ("file:///{+path}.txt", "file:///v1.2/.a.txt", {"path": "v1.2/.a"}),
    ("{+a}/x/{b}", "p/x/q", {"a": "p", "b": "q"}),
    ("{+a}/{+b}/{+c}.md", "x/y/z/w.md", {"a": "x", "b": "y", "c": "z/w"}),
    ("{/x}/{y}/z", "/a/b/z", {"x": "a", "y": "b"}),
    ("{/x}/here", "/here", {}),
    ("{/x}/here", "//here", {"x": ""}),
    ("{+path,x}/here", "/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("{#path,x}/here", "#/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    ("foo{#empty}", "foo#", {"empty": ""}),
    ("foo{#empty}", "foo", {}),
    ("X{.x,y}", "X.1024.768", {"x": "1024", "y": "768"}),
    ("X{.x,y}", "X.1.2.3", None),
    ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
    ("{/var,x}/here", "/value/1024/here", {"var": "value", "x": "1024"}),
    (
        "{/list*,path:4}",
        "/red/green/blue/%2Ffoo",
        {"list": ["red", "green", "blue"], "path": "/foo"},
    ),
    ("{;v,empty,who}", ";v=6;empty;who=fred", {"v": "6", "empty": "", "who": "fred"}),
    ("{;list*}", ";list=red;list=green", {"list": ["red", "green"]}),
    ("{?x,y,empty}", "?empty=&y=768&x=1024", {"x": "1024", "y": "768", "empty": ""}),
    ("{?x}{&y}", "&y=2", {"y": "2"}),
    ("{?x}{&y}", "?y=2&x=1", {"x": "1", "y": "2"}),
    ("{?x}{&y}", "?x=1?y=2", {"x": "1?y=2"}),
    ("{?x}{?y}", "?x=1?y=2", {"x": "1", "y": "2"}),
    ("{;x}{;y}", ";y=2", {"y": "2"}),
    ("file:///{+p}{?x}{&y}", "file:///a&y=2", {"p": "a&y=2"}),  # "&" does not end p
    ("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
    ("?fixed=yes{&x}", "?fixed=no&x=1024", None),
    ("{?var:3}", "?var=valu", None),
    ("{name}.txt", "a.txt", {"name": "a"}),
    ("{name}.txt", "a.b.txt", None),  # {name} stops at the next literal's first character
    ("{a}{/b}{;c}{?d}{#e}", "x/y;c=z?d=w#v", dict(a="x", b="y", c="z", d="w", e="v")),
    ("{a}{/b}{;c}{?d}{#e}", "x#v", dict(a="x", e="v")),
    # Percent-escapes: decoded as UTF-8; malformed ones are no match.
    ("{x}", "%E2%82%AC", {"x": "€"}),
    ("{x}", "caf%c3%a9", {"x": "café"}),
    ("{x}", "100%", None),
    ("{x}", "%zz", None),
    ("{x}", "%C3", None),  # a lone lead byte: not UTF-8
    ("{+x}", "a%2", None),
    ("{?x}", "?x=%FF", None),
    ("{?x}", "?y=%FF&x=1", {"x": "1"}),  # an unknown parameter is not read at all
    # Raw characters a client did not encode are passed through.
    ("notes://{name}", "notes://a b:ü", {"name": "a b:ü"}),
    # Literals match as written in the template or percent-encoded.
    ("notes://my notes/{n}", "notes://my notes/1", {"n": "1"}),
    ("notes://my notes/{n}", "notes://my%20notes/1", {"n": "1"}),
    ("notes://my notes/{n}", "notes://my%20Notes/1", None),
    # Side by side, {x}{y} can not be told apart: x takes all, nothing is left for y.
    ("{x}{y}", "ab", None),
    ("{x}{+y}", "a/b", {"x": "a", "y": "/b"}),
]


@pytest.mark.parametrize(("template", "uri", "expected"), MATCHES)
def test_match(template: str, uri: str, expected: dict[str, str | list[str]] | None) -> None:
    assert UriTemplate(template).match(uri) == expected


#: RFC examples outside the domain where matching is exact, and what match makes of them.
RFC_MATCHED_OTHERWISE: dict[str, dict[str, str | list[str]] | None] = {
    "O{empty}X": None,  # an empty {x} is no match
    "O{+empty}X": None,
    "O{undef}X": None,
    "O{+undef}X": None,
    "up{+path}{var}/here": None,  # {+path}{var} side by side: path takes all
    "?{undef,y}": {"undef": "768"},  # undefined variables are the trailing ones
}


def _specs(template: str) -> list[tuple[str, str]]:
    """(name, modifier) of each variable of ``template``."""
    specs: list[tuple[str, str]] = []
    for body in re.findall(r"\{([^}]*)\}", template):
        for spec in body.lstrip("+#./;?&").split(","):
            name, _, length = spec.rstrip("*").partition(":")
            specs.append((name, "*" if spec.endswith("*") else length))
    return specs


def test_match_reads_rfc_examples_back() -> None:
    """Every RFC example whose values have the types their template declares (a string
    for ``{x}``, a list for ``{x*}``; dicts are not read back) is read back exactly."""
    checked = 0
    for template, uri in RFC_EXAMPLES.items():
        t = UriTemplate(template)
        if template in RFC_MATCHED_OTHERWISE:
            assert t.match(uri) == RFC_MATCHED_OTHERWISE[template], template
            continue
        expected: dict[str, str | list[str]] = {}
        for name, modifier in _specs(template):
            value = RFC_VALUES.get(name)
            if isinstance(value, str):
                expected[name] = value[: int(modifier)] if modifier.isdigit() else value
            elif isinstance(value, list) and value:
                expected[name] = list(value)
            if isinstance(value, Mapping) or isinstance(value, list) != (modifier == "*"):
                break  # not the type the template declares
        else:
            assert t.match(uri) == expected, template
            checked += 1
    assert checked == 81


# --- The round trip, over generated templates and values -----------------------------------

#: Examples per property of the full run (``slow``; about two seconds); raise it for a soak
#: run. ``make unit`` runs each property quick, with a quarter of them.
EXAMPLES = int(os.environ.get("MCPGEN_URITEMPLATE_EXAMPLES", "400"))
RUNS = [
    pytest.param(100, id="quick"),
    pytest.param(EXAMPLES, id="full", marks=pytest.mark.slow),
]
#: Any text: encoding must carry every character through (surrogates cannot be UTF-8).
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
#: Reserved values keep reserved characters raw; "%" could start a kept triplet.
RESERVED_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="%?#,"), min_size=1, max_size=6
)
FRAGMENT_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="%"), max_size=6
)
NO_DOT = ANY_TEXT.filter(lambda s: "." not in s)
NAME_STYLES = ["v", "a.b", "Q_", "n%2D"]


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, Value], dict[str, str | list[str]]]:
    """An MCP-shaped template, values in the domain where matching is exact, and what
    ``match`` must return: a scheme, path items, then optionally a query and a fragment."""
    names = iter(f"{draw(st.sampled_from(NAME_STYLES))}{i}" for i in range(100))
    values: dict[str, Value] = {}
    expected: dict[str, str | list[str]] = {}

    def variable(text: st.SearchStrategy[str], explode: bool, prefix: bool, defined: bool) -> str:
        name = next(names)
        if not defined:
            if draw(st.booleans()):
                values[name] = None
            return name + ("*" if explode else "")
        if explode:
            items = draw(st.lists(text, max_size=3))
            values[name] = items
            if items:
                expected[name] = items
            return name + "*"
        value = draw(text)
        values[name] = value
        length = draw(st.integers(1, 4)) if prefix and draw(st.booleans()) else None
        expected[name] = value if length is None else value[:length]
        return name if length is None else f"{name}:{length}"

    def positional(op: str, text: st.SearchStrategy[str], most: int) -> str:
        """Undefined variables only at the end; only the last one exploded."""
        count = draw(st.integers(1, most))
        defined = draw(st.integers(0, count))
        explode = draw(st.booleans())
        specs = [
            variable(text, explode and i == count - 1, True, i < defined) for i in range(count)
        ]
        return "{" + op + ",".join(specs) + "}"

    def named(op: str, count: int, first_defined: bool = False) -> str:
        """In any order, any defined; but in ``{?x}{&y}`` a defined x comes first: else
        the query begins with "&", which ends no value before it (``{+p}{?x}{&y}``)."""
        specs: list[str] = []
        for i in range(count):
            forced = first_defined and i == 0
            explode = not forced and draw(st.booleans())
            specs.append(variable(ANY_TEXT, explode, True, forced or draw(st.booleans())))
        return "{" + op + ",".join(specs) + "}"

    template = draw(st.sampled_from(["file://", "test://h", "x:", "", "weather://{0}"]))
    if "{0}" in template:
        template = template.replace("{0}", positional("", ANY_TEXT, 1))
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["literal", "simple", "label", "file", "matrix"]))
        if kind == "literal":
            template += draw(st.sampled_from(["/data", "/issues/", "/-/x", ":"]))
        elif kind == "simple":
            template += "/" + positional("", ANY_TEXT, 2)
        elif kind == "label":
            template += "/f" + positional(".", NO_DOT, 2)
        elif kind == "file":  # {name}{.ext}: "." ends the name
            template += "/" + positional("", NO_DOT.filter(bool), 1) + positional(".", NO_DOT, 2)
        else:
            template += named(";", draw(st.integers(1, 2)))
    last = draw(st.sampled_from(["", "segments", "segments/end", "reserved", "reserved/end"]))
    if last.startswith("segments"):
        template += positional("/", ANY_TEXT, 2)
    elif last.startswith("reserved"):
        text = RESERVED_TEXT.filter(lambda s: "/end" not in s)
        template += "/{+" + variable(text, False, True, True) + "}"
    if last.endswith("/end"):  # the literal after the expression ends it
        template += "/end"
    query = draw(st.sampled_from(["", "?", "?&", "fixed&"]))
    if query.startswith("?"):
        template += named("?", draw(st.integers(1, 3)), first_defined=query == "?&")
    if query.endswith("&"):
        template += ("?fixed=1" if query == "fixed&" else "") + named("&", 1)
    if draw(st.booleans()):
        template += "{#" + variable(FRAGMENT_TEXT, False, True, True) + "}"
    return template, values, expected


def _expressions_nonempty(template: str, values: Mapping[str, Value]) -> bool:
    """{x} and {+x} must expand to something: an empty one is no match."""
    simple = re.findall(r"\{\+?[A-Za-z0-9_%][^}]*\}", template)
    return all(UriTemplate(e).expand(values) for e in simple)


@pytest.mark.parametrize("examples", RUNS)
def test_round_trip(examples: int) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(cases())
    def prop(case: tuple[str, dict[str, Value], dict[str, str | list[str]]]) -> None:
        template, values, expected = case
        assume(_expressions_nonempty(template, values))
        t = UriTemplate(template)
        uri = t.expand(values)
        assert t.match(uri) == expected, (template, uri)

    prop()


URI_CHARACTERS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-F]{2})*")


@pytest.mark.parametrize("examples", RUNS)
def test_expand_writes_uri_characters_and_match_keeps_declared_types(examples: int) -> None:
    """Whatever URI comes in (here: an expansion with a slice replaced by anything), match
    answers None or the variables with the types the template declares, never raises."""

    @settings(max_examples=examples // 2, deadline=None)
    @given(cases(), st.data())
    def prop(
        case: tuple[str, dict[str, Value], dict[str, str | list[str]]], data: st.DataObject
    ) -> None:
        template, values, _ = case
        t = UriTemplate(template)
        uri = t.expand(values)
        assert URI_CHARACTERS.fullmatch(uri), uri
        start = data.draw(st.integers(0, len(uri)))
        end = data.draw(st.integers(start, len(uri)))
        hostile = uri[:start] + data.draw(st.text(max_size=8)) + uri[end:]
        found = t.match(hostile)
        if found is not None:
            exploded = {name for name, modifier in _specs(template) if modifier == "*"}
            assert set(found) <= set(t.variables)
            for name, value in found.items():
                assert isinstance(value, list) == (name in exploded), (name, value)

    prop()


# --- Bounded work ----------------------------------------------------------------------------

HOSTILE_TEMPLATES = [
    "{a}{b}{c}{d}{e}/x",
    "{a},{b},{c},{d}.x",
    "{+a}/{+b}/{+c}/{+d}/end",
    "{+a}{+b}{#c}",
    "x{/a,b*}{/c}{.d}{;e}{?f,g*}{&h}{#i}z",
    "".join(f"{{/v{i}}}" for i in range(200)) + "{?q*}",
    "".join(f"{{v{i}}}-" for i in range(200)),
]
HOSTILE_URIS = [
    "a" * 100_000,
    "a," * 50_000,
    "/a" * 50_000 + "!",
    "/end" * 25_000 + "/",
    "%" * 100_000,
    "%4" * 50_000,
    "?q=1&" * 20_000 + "#",
    "-a" * 50_000,
    ("x/" + ";e=1" * 10_000 + "?f=" + "%41" * 20_000) + "&h=2#" + "z" * 10_000,
]


@pytest.mark.parametrize("template", HOSTILE_TEMPLATES)
def test_linear_time_on_100kb_uris(template: str) -> None:
    t = UriTemplate(template)
    started = time.perf_counter()
    for uri in HOSTILE_URIS:
        t.match(uri)
    elapsed = time.perf_counter() - started
    assert elapsed < 1.0, f"{len(HOSTILE_URIS)} URIs of ~100 KB took {elapsed:.2f} s"


def test_linear_time_with_a_long_template() -> None:
    """Each of 200 expressions scans ahead for the literal after it: still fast."""
    t = UriTemplate("".join(f"{{+v{i}}}/L{i}.{{/s{i}}}/M{i}." for i in range(200)))
    uri = "".join(f"{'a/' * 120}/L{i}./{'b' * 260}/M{i}." for i in range(200))
    assert len(uri) > 100_000
    started = time.perf_counter()
    found = t.match(uri)
    elapsed = time.perf_counter() - started
    assert found is not None and found["s199"] == "b" * 260
    assert elapsed < 1.0, f"took {elapsed:.2f} s"
