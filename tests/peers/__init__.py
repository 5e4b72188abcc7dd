"""Purpose-built MCP servers the stdio runtime tests spawn as real subprocesses.

Run one from the repository root with ``python -m tests.peers.<name>``.
"""
