"""Every test here runs another implementation of MCP as a peer (the official Python SDK,
TypeScript servers and clients from the npm registry) over real pipes or sockets: all are
marked ``slow``, which ``make unit`` leaves out."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.slow)
