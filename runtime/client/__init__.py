"""The client: ``ClientSession`` speaks to a server of either era and gives the
generated typed ``Client`` (``session``); connecting over stdio or a URL
(``transports``), the Streamable HTTP client transport (``http``), a client in the same
event loop as its server (``in_memory``), and tasks followed from the requester's side
(``tasks``). ``auth`` is the OAuth 2.1 client.

May import: ``core``, ``aio``, ``tasks``, ``server``, ``http``.
"""
