"""perflab: a reproducible performance lab for a Java key-value server."""

__version__ = "0.1.0"
