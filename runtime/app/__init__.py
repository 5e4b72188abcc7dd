"""``App``: a server written as decorated Python functions: tools, resources, templates,
prompts and completions registered from typed functions (``tools``, ``resources``,
``prompts``, ``schemas``, ``docstrings``, ``content``), answered with paged lists
(``pages``), resource templates matched by RFC 6570 (``uritemplate``,
``uritemplate_syntax``). An ``App`` produces an ordinary ``Server``.

May import: every layer below it (``core`` to ``client``).
"""
