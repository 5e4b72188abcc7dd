"""Open objects: JSON objects with typed attributes for their declared keys that keep
every other key (``_meta``, capabilities, a tool's ``inputSchema``).

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import msgspec
import msgspec.inspect  # msgspec loads it anyway

from ._decoding import MISSING, dec_hook, kind_of, nested
from ._defaults import is_written

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: the decorator only informs type checkers, so a no-op will do

    def dataclass_transform(**_: Any) -> Any:
        return lambda cls: cls


class _Key:
    """A declared key of an :class:`OpenObject`, exposed as a typed attribute."""

    __slots__ = ("wire", "default", "name", "absent")

    def __init__(self, wire: str, default: Any) -> None:
        self.wire = wire
        self.default = default
        self.name = ""
        #: What the attribute reads while the key is absent: its default, else UNSET.
        self.absent = msgspec.UNSET if default is MISSING else default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: OpenObject | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.get(self.wire, self.absent)

    def __set__(self, obj: OpenObject, value: Any) -> None:
        if value is msgspec.UNSET:
            obj.pop(self.wire, None)
        else:
            obj[self.wire] = value


class _Plan(NamedTuple):
    """How an open object decodes."""

    #: A Struct of the declared keys, which validates them.
    shape: type[msgspec.Struct]
    #: Whether any declared key is required (an empty object needs validating).
    required: bool
    #: (wire, attribute) of declared keys whose values decode to other objects.
    rebuilt: tuple[tuple[str, str], ...]
    wires: frozenset[str]
    #: (wire, default) of the keys the revision requires that have a default: a decode
    #: sets an absent one, as what such an object is sent on must carry it.
    written: tuple[tuple[str, Any], ...]
    #: The type of undeclared values (``None``: any JSON value).
    extra: Any


def key(wire: str, *, default: Any = MISSING) -> Any:
    """Declare the attribute of an open object that reads and writes the key ``wire``."""
    return _Key(wire, default)


@dataclass_transform(kw_only_default=True, field_specifiers=(key,))
class OpenObject(dict[str, Any]):
    """A JSON object with typed attributes for its declared keys that keeps all other keys.

    Construct with keyword arguments for declared keys; any other key is set like a dict
    item (``obj["com.example/trace"] = ...``). Equality, encoding and iteration are those
    of the underlying dict of wire names.
    """

    __keys__: ClassVar[dict[str, _Key]] = {}
    #: Type of undeclared values, as a string annotation (``None``: any JSON value).
    __extra__: ClassVar[str | None] = None
    __plan: ClassVar[_Plan | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__keys__ = {n: v for n, v in vars(cls).items() if isinstance(v, _Key)}
        cls.__plan = None

    def __init__(self, **fields: Any) -> None:
        super().__init__()
        keys = type(self).__keys__
        for name, spec in keys.items():
            value = fields.pop(name, spec.default)
            if value is MISSING:
                raise TypeError(f"{type(self).__name__}() missing required argument: {name!r}")
            if value is not msgspec.UNSET:
                self[spec.wire] = value
        if fields:
            raise TypeError(f"{type(self).__name__}() got unexpected arguments: {sorted(fields)}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"

    @classmethod
    def __mcpgen_plan__(cls) -> _Plan:
        """How this class decodes, worked out on first use."""
        plan = cls.__plan
        if plan is not None:
            return plan
        hints = {}
        for klass in reversed(cls.__mro__):
            hints.update(getattr(klass, "__annotations__", {}))
        fields = []
        for name, spec in cls.__keys__.items():
            if spec.default is MISSING:
                fields.append((name, hints[name], msgspec.field(name=spec.wire)))
            else:
                fields.append(
                    (name, hints[name], msgspec.field(default=spec.default, name=spec.wire))
                )
        shape = msgspec.defstruct(
            f"{cls.__name__}Keys", fields, kw_only=True, module=cls.__module__
        )
        extra = None
        if cls.__extra__ is not None:
            namespace = vars(sys.modules[cls.__module__])
            extra = eval(cls.__extra__, namespace)  # noqa: S307 - generated text
        info = msgspec.inspect.type_info(shape)
        assert isinstance(info, msgspec.inspect.StructType)
        plan = _Plan(
            shape,
            any(f.required for f in info.fields),
            tuple((f.encode_name, f.name) for f in info.fields if not _kept(f.type)),
            frozenset(spec.wire for spec in cls.__keys__.values()),
            tuple(
                (spec.wire, spec.default)
                for spec in cls.__keys__.values()
                if spec.default is not MISSING and is_written(spec.default)
            ),
            extra,
        )
        cls.__plan = plan
        return plan

    @classmethod
    def __mcpgen_decode__(cls, obj: Any) -> OpenObject:
        if type(obj) is not dict:
            raise ValueError(f"Expected `object`, got `{kind_of(obj)}`")
        shape, required, rebuilt, wires, written, extra = cls.__plan or cls.__mcpgen_plan__()
        inst = cls.__new__(cls)
        if not obj and not required and not written:
            return inst  # an empty object (capabilities often are): nothing to check
        dict.update(inst, obj)  # every key, in the order it came
        if obj or required:
            try:
                declared = msgspec.convert(obj, shape, dec_hook=dec_hook)
            except msgspec.ValidationError as exc:
                raise ValueError(str(exc)) from None
            for wire, name in rebuilt:  # declared values that decode to another object
                if wire in obj:
                    dict.__setitem__(inst, wire, getattr(declared, name))
        if extra is not None:
            for k, v in obj.items():
                if k not in wires:
                    dict.__setitem__(
                        inst, k, nested(msgspec.convert, v, extra, dec_hook=dec_hook, at=k)
                    )
        for wire, default in written:
            if wire not in obj:
                dict.__setitem__(inst, wire, default)
        return inst  # any other absent key with a default stays absent: its attribute reads it


def _kept(info: Any) -> bool:
    """Whether a value of this type decodes to the very object JSON gave (a string, an
    integer, …), so an open object keeps the decoded JSON value as it is."""
    mi = msgspec.inspect
    if isinstance(info, mi.UnionType):
        return all(_kept(member) for member in info.types)
    return isinstance(
        info, (mi.StrType, mi.IntType, mi.BoolType, mi.NoneType, mi.LiteralType, mi.AnyType)
    )
