"""Every registration mistake is refused when the decorator runs (``@app.tool``,
``@app.prompt``, ``@app.resource``), never on a call: one ``RegistrationError`` line naming
the tool, prompt or resource, the parameter and the fix. After each mistake a good
registration on the same ``App`` is served to a real client over in-memory transports."""

import dataclasses
import datetime
import decimal
import enum
import functools
import uuid
import socket
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal, Optional

import msgspec
import pydantic
import pytest

from mcpgen.generated.v2025_11_25 import server as stubs_2025
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, File, Image, McpgenError, RegistrationError
from mcpgen.runtime.testing import connect
from support.app_scenarios import plain, run


class Plain:
    """A class msgspec knows nothing of."""


class Model(pydantic.BaseModel):
    a: int


def refused(register: Callable[[], object], *said: str) -> str:
    """The one line ``register`` is refused with; it says every one of ``said``."""
    with pytest.raises(RegistrationError) as raised:
        register()
    message = str(raised.value)
    assert "\n" not in message, message
    for part in said:
        assert part in message, (part, message)
    return message


def tool_works(app: App) -> None:
    """A good tool registered on ``app`` after a mistake is listed and called."""

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    async def scenario() -> None:
        async with connect(app) as client:
            assert "add" in [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
            assert plain(result)["structuredContent"] == {"result": 5}

    run(scenario())


def prompt_works(app: App) -> None:
    """A good prompt registered on ``app`` after a mistake is listed and got."""

    @app.prompt
    def greeting(name: str, times: int = 1) -> str:
        return f"Greet {name} " + "again " * (times - 1)

    async def scenario() -> None:
        async with connect(app) as client:
            assert [p.name for p in (await client.list_prompts()).prompts] == ["greeting"]
            got = await client.get_prompt(name="greeting", arguments={"name": "Ada", "times": "2"})
            assert plain(got)["messages"][0]["content"]["text"] == "Greet Ada again "

    run(scenario())


def resource_works(app: App) -> None:
    """A good resource template registered on ``app`` after a mistake is read."""

    @app.resource("notes://{folder}/{name}")
    def note(folder: str, name: str) -> str:
        return f"{folder}/{name}"

    async def scenario() -> None:
        async with connect(app) as client:
            read = await client.read_resource(uri="notes://a/b")
            assert plain(read)["contents"][0]["text"] == "a/b"

    run(scenario())


# -- tool parameters ----------------------------------------------------------------------------


def takes_plain(x: Plain) -> int:
    return 1


def takes_lambda(x: lambda: 1) -> int:  # pyright: ignore  # a lambda where a type goes
    return 1


def takes_callable(x: Callable[[int], int]) -> int:
    return 1


def takes_socket(x: socket.socket) -> int:
    return 1


def takes_list_of_plain(x: list[Plain]) -> int:
    return 1


def takes_optional_plain(x: Optional[Plain] = None) -> int:
    return 1


def takes_dict_of_sockets(x: dict[str, socket.socket]) -> int:
    return 1


def takes_pydantic(x: Model) -> int:
    return 1


def takes_missing(x: int) -> int:
    return 1


takes_missing.__annotations__["x"] = "Missing"  # a name its module does not define


def takes_other_context(x: int, ctx: stubs_2025.Context) -> int:
    return x


def takes_object(x: object) -> int:
    return 1


def takes_two_string_likes(x: bytes | str) -> int:
    return 1


def takes_args(*x: int) -> int:
    return 1


def takes_positional(x: int, /) -> int:
    return x


def takes_plain_kwargs(**x: Plain) -> int:
    return 1


def takes_kwargs_and_more(a: int, **x: int) -> int:
    return a


PARAMETER_MISTAKES = {
    "a plain class": (takes_plain, "test_registration_errors.Plain", "type it as"),
    "a lambda as a type": (takes_lambda, "<lambda>", "type it as"),
    "Callable": (takes_callable, "collections.abc.Callable", "type it as"),
    "a socket": (takes_socket, "socket.socket", "type it as"),
    "a list of a plain class": (
        takes_list_of_plain,
        "its test_registration_errors.Plain",
        "Struct",
    ),
    "an Optional plain class": (takes_optional_plain, "Plain", "dataclass"),
    "a dict of sockets": (takes_dict_of_sockets, "socket.socket", "TypedDict"),
    "a pydantic model": (takes_pydantic, "Model", "make it a msgspec.Struct or a dataclass"),
    "an unresolvable name": (takes_missing, "'Missing'", "define or import that name"),
    "another version's Context": (
        takes_other_context,
        "v2025_11_25.server.Context",
        "annotate it with this App's binding's Context, mcpgen.generated.v2026_07_28",
    ),
    "object": (takes_object, "typed object", "type it Any to take any JSON value"),
    "two string-like types": (takes_two_string_likes, "which msgspec refuses", "type it as"),
    "*args": (takes_args, "*x cannot receive arguments", "declare each as a parameter"),
    "positional-only": (takes_positional, "positional-only", "remove the '/'"),
    "**kwargs of a plain class": (takes_plain_kwargs, "'**x'", "type it as"),
    "**kwargs beside a parameter": (
        takes_kwargs_and_more,
        "so a cannot be parameters too",
        "read them from the dict",
    ),
}


@pytest.mark.parametrize("mistake", sorted(PARAMETER_MISTAKES))
def test_a_tool_parameter_json_cannot_carry_is_refused_naming_the_tool_parameter_and_fix(
    mistake: str,
) -> None:
    """Such a parameter raised msgspec's multi-line TypeError (naming neither the tool nor
    the parameter), Python's NameError, or nothing until a call failed."""
    fn, what, fix = PARAMETER_MISTAKES[mistake]
    app = App("registry", binding=stubs)
    parameter = {"another version's Context": "'ctx'", "**kwargs of a plain class": "'**x'"}
    parameter.update({"*args": "*x", "**kwargs beside a parameter": "**arguments"})
    said = parameter.get(mistake, "parameter 'x'")
    refused(lambda: app.add_tool(fn), f"tool {fn.__name__!r}", said, what, fix)
    assert not app.tools
    tool_works(app)


# -- the context ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["ctx", "context"])
def test_an_unannotated_context_parameter_is_refused_in_tools_prompts_and_resources(
    name: str,
) -> None:
    """It used to become a required argument every client had to send. As in the official
    SDK and FastMCP, only the annotation makes a parameter the context: the message says
    to annotate it with the binding's Context (or give it a type to keep an argument)."""
    app = App("registry", binding=stubs)
    namespace: dict[str, Any] = {}
    exec(f"def lookup(city: str, {name}): return city", namespace)
    lookup = namespace["lookup"]
    fix = f"annotate it `{name}: Context` (mcpgen.generated.v2026_07_28.server.Context)"
    refused(lambda: app.add_tool(lookup), "tool 'lookup'", f"parameter {name!r}", fix)
    refused(lambda: app.add_prompt(lookup), "prompt 'lookup'", f"parameter {name!r}", fix)
    refused(
        lambda: app.add_resource("cities://{city}", lookup),
        "resource template 'cities://{city}' (lookup)",
        f"parameter {name!r}",
        fix,
    )
    assert not app.tools and not app.prompts and not app.templates

    @app.tool
    def where(city: str, ctx: stubs.Context, context: str = "") -> str:
        """An annotated context is filled in; a typed ``context`` stays an argument."""
        return f"{city} {context} {ctx.protocol_version}"

    async def scenario() -> None:
        async with connect(app) as client:
            (listed,) = (await client.list_tools()).tools
            assert sorted(plain(listed.input_schema)["properties"]) == ["city", "context"]
            result = await client.call_tool(name="where", arguments={"city": "Oslo"})
            assert plain(result)["content"][0]["text"] == "Oslo  2026-07-28"

    run(scenario())


def test_a_method_registered_from_its_class_is_refused_for_its_self() -> None:
    """``self`` would have been a required argument; the bound method is what to give."""

    class Shelf:
        def count(self, kind: str) -> int:
            return len(kind)

    app = App("registry", binding=stubs)
    refused(
        lambda: app.add_tool(Shelf.count),
        "tool 'count' (",
        "parameter 'self'",
        "register the bound method",
    )
    app.add_tool(Shelf().count, name="length")
    tool_works(app)
    assert "length" in app.tools


# -- defaults -------------------------------------------------------------------------------


def default_of_another_type(a: int = "three") -> int:  # type: ignore[assignment]
    return a


def default_none_not_allowed(a: int = None) -> int:  # type: ignore[assignment]
    return a


def default_out_of_bounds(a: Annotated[int, msgspec.Meta(ge=1)] = 0) -> int:
    return a


def default_mutable(a: list[int] = [1]) -> int:  # noqa: B006
    return len(a)


class Box(msgspec.Struct):
    size: int = 1


def default_mutable_struct(a: Box = Box()) -> int:
    return a.size


def default_without_json(a: Any = object()) -> int:
    return 1


DEFAULT_MISTAKES = {
    "of another type": (default_of_another_type, "'three', does not fit int", "widen the type"),
    "None without | None": (default_none_not_allowed, "None, does not fit int", "`... | None`"),
    "out of its bounds": (default_out_of_bounds, "Expected `int` >= 1", "give a default"),
    "mutable": (default_mutable, "shared by every call", "default to a tuple"),
    "a mutable Struct": (default_mutable_struct, "shared by every call", "a frozen Struct"),
    "without JSON": (default_without_json, "of type object, which JSON cannot say", "None"),
}


@pytest.mark.parametrize("mistake", sorted(DEFAULT_MISTAKES))
def test_a_default_that_does_not_fit_its_parameter_is_refused(mistake: str) -> None:
    """Such defaults were listed in the schema as they were (or raised msgspec's own
    TypeError), and a call without the argument ran the tool with a value of another
    type."""
    fn, what, fix = DEFAULT_MISTAKES[mistake]
    app = App("registry", binding=stubs)
    refused(lambda: app.add_tool(fn), f"tool {fn.__name__!r}", "parameter 'a'", what, fix)
    tool_works(app)


# -- tool results ---------------------------------------------------------------------------


def returns_plain() -> Plain:
    return Plain()


def returns_socket() -> socket.socket:
    return socket.socket()


def returns_iterator() -> Iterator[int]:
    return iter([1])


def returns_missing() -> int:
    return 1


returns_missing.__annotations__["return"] = "Nowhere"  # a name its module does not define


def returns_content_or_data() -> Image | int:
    return 1


def yields() -> Iterator[int]:
    yield 1


RESULT_MISTAKES = {
    "a plain class": (returns_plain, "its result is typed test_registration_errors.Plain"),
    "a socket": (returns_socket, "its result is typed socket.socket"),
    "an iterator": (returns_iterator, "collections.abc.Iterator"),
    "an unresolvable name": (returns_missing, "its result is annotated 'Nowhere'"),
    "content or data": (returns_content_or_data, "content mixed with data"),
    "a generator": (yields, "the function is a generator"),
}


@pytest.mark.parametrize("mistake", sorted(RESULT_MISTAKES))
def test_a_tool_result_that_cannot_be_sent_is_refused(mistake: str) -> None:
    fn, what = RESULT_MISTAKES[mistake]
    app = App("registry", binding=stubs)
    fix = "define or import" if "unresolvable" in mistake else "return "
    refused(lambda: app.add_tool(fn), f"tool {fn.__name__!r}", what, fix)
    tool_works(app)


# -- prompts --------------------------------------------------------------------------------


def prompt_int(topic: str) -> int:
    return 1


def prompt_dict(topic: str) -> dict[str, str]:
    return {}


def prompt_list_of_int(topic: str) -> list[int]:
    return []


def prompt_triples(topic: str) -> list[tuple[str, str, str]]:
    return []


PROMPT_RESULTS = {
    "int": (prompt_int, "it returns int"),
    "dict": (prompt_dict, "it returns dict[str, str]"),
    "a list of int": (prompt_list_of_int, "it returns list[int]"),
    "triples": (prompt_triples, "list[tuple[str, str, str]]"),
}


@pytest.mark.parametrize("mistake", sorted(PROMPT_RESULTS))
def test_a_prompt_returning_what_makes_no_messages_is_refused(mistake: str) -> None:
    """A prompt returning ``int`` was accepted and failed only when got (-32603)."""
    fn, what = PROMPT_RESULTS[mistake]
    app = App("registry", binding=stubs)
    fix = "return str (one user message), a list of messages"
    refused(lambda: app.add_prompt(fn), f"prompt {fn.__name__!r}", what, fix)
    prompt_works(app)


def test_every_prompt_result_it_can_make_is_registered() -> None:
    """What ``RegisteredPrompt.result`` turns into messages passes the check, so the
    check refuses nothing that works."""
    app = App("registry", binding=stubs)
    app.add_prompt(lambda: "x", name="text")
    for name, fn in {
        "unannotated": lambda: "x",
        "list": lambda: ["x"],
    }.items():
        app.add_prompt(fn, name=name)

    def pairs() -> list[tuple[str, str | Image]]:
        return [("assistant", "hi"), ("user", Image(b"\x89PNG"))]

    def message() -> t.PromptMessage:
        return t.PromptMessage(role="user", content=t.TextContent(text="m"))

    def whole() -> t.GetPromptResult:
        return t.GetPromptResult(messages=[message()])

    def blocks() -> list[t.TextContent | t.ImageContent] | str:
        return [t.TextContent(text="b")]

    for fn in (pairs, message, whole, blocks):
        app.add_prompt(fn)

    async def scenario() -> None:
        async with connect(app) as client:
            for name in app.prompts:
                got = plain(await client.get_prompt(name=name))
                assert got["messages"], name

    run(scenario())


def test_a_prompt_parameter_no_string_converts_to_is_refused() -> None:
    """Prompt arguments arrive as strings: a ``list[int]`` parameter could never be
    given."""

    def ranked(items: list[int]) -> str:
        return ""

    app = App("registry", binding=stubs)
    refused(
        lambda: app.add_prompt(ranked),
        "prompt 'ranked'",
        "parameter 'items' is typed list[int]",
        "arrives as a string; type it str",
    )
    prompt_works(app)


# -- resources and templates --------------------------------------------------------------------


def resource_plain() -> Plain:
    return Plain()


def resource_image() -> Image:
    return Image(b"")


def resource_blocks() -> list[t.TextContent]:
    return []


RESOURCE_RESULTS = {
    "a plain class": (resource_plain, "its result is typed test_registration_errors.Plain"),
    "an Image": (resource_image, "Image is a tool's or prompt's content"),
    "content blocks": (resource_blocks, "TextContent is a tool's or prompt's content"),
}


@pytest.mark.parametrize("mistake", sorted(RESOURCE_RESULTS))
def test_a_resource_returning_what_is_no_contents_is_refused(mistake: str) -> None:
    fn, what = RESOURCE_RESULTS[mistake]
    app = App("registry", binding=stubs)
    fix = "return str (text), bytes or File (a blob)"
    refused(lambda: app.add_resource("x://it", fn), "resource 'x://it'", what, fix)

    def template(name: str) -> socket.socket:
        return socket.socket()

    refused(
        lambda: app.add_resource("x://{name}", template),
        "resource template 'x://{name}' (",
        "socket.socket",
        fix,
    )
    resource_works(app)


def test_every_resource_result_it_can_send_is_registered() -> None:
    """The check refuses nothing that works: what goes as it is (text, bytes, ``File``,
    contents, a whole result) and data sent as JSON, the bindings' open objects too."""
    app = App("registry", binding=stubs)

    def mixed() -> list[str | File]:
        return ["a", File(b"b", "application/x-b")]

    def whole() -> t.ReadResourceResult:
        return t.ReadResourceResult(contents=[t.TextResourceContents(uri="x://w", text="w")])

    def listing() -> t.Tool:  # its inputSchema is an open object (a dict)
        return t.Tool(name="n", input_schema=t.convert({"type": "object"}, t.ToolInputSchema))

    for uri, fn in {"x://mixed": mixed, "x://whole": whole, "x://tool": listing}.items():
        app.add_resource(uri, fn)

    async def scenario() -> None:
        async with connect(app) as client:
            read = [plain(await client.read_resource(uri=uri)) for uri in app.resources]
            assert [len(r["contents"]) for r in read] == [2, 1, 1]
            assert '"name":"n"' in read[2]["contents"][0]["text"]

    run(scenario())


TEMPLATE_MISTAKES: dict[str, tuple[str, Callable[..., Any], str, str]] = {
    "a variable that is no parameter": (
        "x://{a}/{b}",
        lambda a: a,
        "variable 'b' is no parameter of the function (which takes a)",
        "add a parameter b",
    ),
    "a required parameter that is no variable": (
        "x://{a}",
        lambda a, c: a,
        "parameter 'c' is no variable",
        "put {c} in the template or give it a default",
    ),
    "a list for a string": (
        "x://{a}",
        lambda a: a,
        "parameter 'a' is typed list[str], but the URI gives it a string",
        "type it str",
    ),
    "an int for an exploded variable": (
        "x://{/a*}",
        lambda a: a,
        "parameter 'a' is typed <class 'int'>, but the URI gives it a list of strings",
        "type it list[str]",
    ),
    "parameters of a fixed URI": (
        "x://fixed",
        lambda a: a,
        "the function takes a, but a resource at a fixed URI",
        "make the URI a template ('x://fixed/{a}')",
    ),
    "a malformed template": ("x://{a", lambda a: a, "unclosed '{'", "x://{a"),
}
TEMPLATE_MISTAKES["a list for a string"][1].__annotations__["a"] = list[str]
TEMPLATE_MISTAKES["an int for an exploded variable"][1].__annotations__["a"] = int


@pytest.mark.parametrize("mistake", sorted(TEMPLATE_MISTAKES))
def test_a_template_whose_variables_do_not_fit_the_parameters_is_refused(mistake: str) -> None:
    template, fn, what, fix = TEMPLATE_MISTAKES[mistake]
    app = App("registry", binding=stubs)
    refused(lambda: app.add_resource(template, fn), f"{template!r}", what, fix)
    assert not app.resources and not app.templates
    resource_works(app)


# -- names and options ----------------------------------------------------------------------


def test_a_second_registration_of_a_name_or_uri_is_refused() -> None:
    app = App("registry", binding=stubs)

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    app.add_prompt(lambda: "p", name="p")
    app.add_resource("x://r", lambda: "r")
    app.add_resource("x://{v}", lambda v: v)
    refused(
        lambda: app.add_tool(lambda a, b: a - b, name="add"),
        "tool 'add' is already registered",
        "with another name=, or call app.remove_tool('add') first",
    )
    refused(lambda: app.add_prompt(lambda: "q", name="p"), "prompt 'p'", "app.remove_prompt('p')")
    refused(lambda: app.add_resource("x://r", lambda: "s"), "resource 'x://r'", "another URI")
    refused(
        lambda: app.add_resource("x://{v}", lambda v: v),
        "resource template 'x://{v}' is already registered",
        "app.remove_resource('x://{v}')",
    )
    app.remove_tool("add")
    tool_works(app)


def test_a_decorator_given_a_name_instead_of_a_function_is_refused() -> None:
    """``@app.tool("add")`` (FastMCP's way of naming) used to fail with an AttributeError
    on a ``str``; ``@app.resource`` without its URI silently replaced the function."""
    app = App("registry", binding=stubs)
    named: Any = "add"  # what the type checker would have refused
    refused(lambda: app.tool(named), "tool 'add'", "@app.tool(name='add')")
    refused(lambda: app.prompt(named), "prompt 'add'", "@app.prompt(name='add')")

    def notes() -> str:
        return ""

    uri: Any = notes
    refused(lambda: app.resource(uri), "resource 'notes'", "@app.resource('notes://{name}')")
    tool_works(app)


def test_a_function_without_a_name_of_its_own_must_be_given_one() -> None:
    """A lambda became the tool ``<lambda>``; a partial or callable object raised an
    AttributeError."""
    app = App("registry", binding=stubs)

    def scale(x: int, by: int) -> int:
        return x * by

    refused(lambda: app.add_tool(lambda x: x), "a tool made of", "<lambda>", "name='...'")
    doubled = functools.partial(scale, by=2)
    refused(lambda: app.add_tool(doubled), "a partial object", "app.add_tool(fn, name='...')")
    refused(lambda: app.add_prompt(lambda: "p"), "a prompt made of", "app.add_prompt(fn, name=")
    app.add_tool(doubled, name="double")
    tool_works(app)


def test_an_unknown_option_is_refused_naming_the_options() -> None:
    """A misspelt option raised Python's TypeError about ``RegisteredTool.__init__``."""
    app = App("registry", binding=stubs)

    def add(a: int, b: int) -> int:
        return a + b

    refused(
        lambda: app.add_tool(add, titel="Add"),
        "tool 'add': there is no option 'titel'",
        "the options are annotations, blocking,",
        "title",
    )
    refused(lambda: app.add_prompt(add, nmae="x"), "prompt 'add'", "'nmae'", "description")
    refused(lambda: app.add_resource("x://a", add, mimetype="a"), "'mimetype'", "mime_type")
    refused(lambda: app.add_tool(add, task="yes"), "tool 'add'", "task must be one of")
    tool_works(app)


def test_a_completion_of_an_argument_the_prompt_lacks_is_refused() -> None:
    app = App("registry", binding=stubs)

    @app.prompt
    def greeting(name: str, times: int = 1) -> str:
        return f"Greet {name}"

    refused(
        lambda: app.completion(prompt="greeting", argument="nmae"),
        "completion of prompt 'greeting'",
        "no argument 'nmae'",
        "its arguments: name, times",
    )

    @app.completion(prompt="greeting", argument="name")
    def names(value: str, given: dict[str, str]) -> list[str]:
        return [n for n in ("Ada", "Alan") if n.startswith(value)]

    async def scenario() -> None:
        async with connect(app) as client:
            ref = t.PromptReference(name="greeting")
            argument = t.CompleteRequestParamsArgument(name="name", value="A")
            done = await client.complete(ref=ref, argument=argument)
            assert done.completion.values == ["Ada", "Alan"]

    run(scenario())


def test_registration_errors_are_mcpgen_type_and_value_errors() -> None:
    """Code that caught the TypeError or ValueError these mistakes raised still does."""
    assert issubclass(RegistrationError, McpgenError)
    assert issubclass(RegistrationError, TypeError)
    assert issubclass(RegistrationError, ValueError)


class Shade(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Spot:
    x: int = 0


class Frozen(msgspec.Struct, frozen=True):
    size: int = 1


def defaults(
    shade: Shade = Shade.RED,
    day: datetime.date = datetime.date(2020, 1, 2),
    spot: Spot = Spot(),
    box: Frozen = Frozen(),
    tags: frozenset[str] = frozenset(),
    pair: tuple[int, ...] = (1, 2),
    empty: list[int] = [],  # noqa: B006  # empty: msgspec copies it per call
    amount: decimal.Decimal = decimal.Decimal("1.5"),
    ratio: float = 1,
    raw: bytes = b"x",
    pick: Literal["a", "b"] = "a",
    maybe: uuid.UUID | None = None,
    left_out: int | msgspec.UnsetType = msgspec.UNSET,
) -> str:
    return f"{shade.value} {day} {spot.x} {box.size} {sorted(tags)} {pair} {amount} {ratio}"


def test_defaults_of_every_type_json_carries_are_registered_and_used() -> None:
    """The default check refuses nothing that works: enums, dates, dataclasses, frozen
    Structs, sets, tuples, an empty list, ``Decimal``, an int for a float, ``UNSET``."""
    app = App("registry", binding=stubs)
    app.add_tool(defaults)

    async def scenario() -> None:
        async with connect(app) as client:
            result = plain(await client.call_tool(name="defaults", arguments={}))
            assert result["content"][0]["text"] == "red 2020-01-02 0 1 [] (1, 2) 1.5 1"

    run(scenario())
