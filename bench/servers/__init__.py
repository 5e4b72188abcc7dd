"""The echo servers, standalone scripts that import nothing from ``bench`` (docs/performance.md)."""
