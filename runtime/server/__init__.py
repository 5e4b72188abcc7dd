"""``Server``: an implementation of a binding's ``ServerHandlers`` served over any
transport, in both eras: dispatch through the generated table, capabilities derived from
the handlers, tasks and extensions wired in, changes announced to subscribers (such as
the HTTP transport's sessions).

May import: ``core``, ``aio``, ``tasks``.
"""
