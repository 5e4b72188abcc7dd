"""The asyncio driver over the core: a ``Session`` runs handlers concurrently (bounded,
with backpressure), cancels them, awaits answers and hands each request a
``RequestScope``; middleware around dispatch; the byte transports that need no extra
package: stdio (``stdio``, ``line_ends``) and in-memory (``memory``).

May import: ``core``.
"""
