"""A request's scope holds the session it came in, or makes it on first use."""

from __future__ import annotations

from typing import Any, cast

import pytest

from mcpgen.runtime.aio.session import RequestScope


def test_a_scope_without_a_session_or_a_way_to_open_one_is_refused() -> None:
    with pytest.raises(TypeError, match="needs a session or a way to open one"):
        RequestScope(None, cast(Any, None))
