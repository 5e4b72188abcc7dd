"""mcpgen: typed msgspec bindings for every Model Context Protocol version, and a thin runtime.

Import roots: ``mcpgen.generator`` (schema → code, CLI), ``mcpgen.runtime`` (transports,
session, negotiation) and ``mcpgen.generated`` (the output of ``make generate``).
"""

__version__ = "0.1.0"
