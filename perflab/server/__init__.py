"""The server under test: start and stop it (:mod:`.process`), sample its ``/v0/stats`` (:mod:`.stats`)."""

from .process import MAIN_CLASS, Server, http_get, java_version, start_server  # noqa: F401
