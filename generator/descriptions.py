"""Schema prose made docstring text: upstream writes TSDoc, which survives the conversion
to JSON Schema only in part."""

from __future__ import annotations

from collections.abc import Collection


def clean_description(text: str | None, names: Collection[str] = ()) -> str | None:
    """``text`` with its TSDoc links (``{@link Target}``) rendered as code. The upstream
    conversion glues a link's label to its target (``{@link CallToolRequesttools/call}``
    for ``{@link CallToolRequest | tools/call}``): where a definition name of ``names``
    starts a link and more follows, the rest is the label, and the label is shown."""
    if not text:
        return None
    out, rest = [], text
    while "{@link " in rest:
        head, _, tail = rest.partition("{@link ")
        body, _, rest = tail.partition("}")
        out.append(head + _link(body.strip(), names))
    out.append(rest)
    return "".join(out).strip() or None


def _link(body: str, names: Collection[str]) -> str:
    target = max((n for n in names if body.startswith(n)), key=len, default="")
    label = body[len(target) :].strip(" |")
    if not target or not label or label[0] == ".":  # a name, or a path such as Tool.x
        return f"`{body}`"
    return label if "`" in label else f"`{label}`"
