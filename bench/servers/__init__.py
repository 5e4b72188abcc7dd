"""The echo servers the call benchmarks spawn, one ``echo`` tool each, as standalone scripts
(``python -I bench/servers/NAME.py --transport stdio|http``) that import nothing from
``bench``: a child pays only for what a real server of its kind loads. ``serve.py`` holds
their few options and the uvicorn settings they all share; see docs/performance.md."""
