"""Exceptions raised by perflab.

Every failure that involves a child process (server, load generator, profiler, in-process JVM)
carries the cause and the tail of the relevant log, so a notebook cell shows what went wrong
without anyone opening files.
"""

from __future__ import annotations


class PerflabError(RuntimeError):
    """Base class of perflab's own errors."""

    def __init__(self, message: str, log_tail: str | None = None):
        self.cause = message
        self.log_tail = log_tail or ""
        text = message
        if self.log_tail.strip():
            text += "\n--- log tail ---\n" + self.log_tail.rstrip()
        super().__init__(text)


class ServerFault(PerflabError):
    """The server under test breaks HTTP (a student's bug, the common case): what is wrong, in words it can be
    fixed by (:func:`perflab.server.protocol.diagnose`). A report makes it a finding, not a crash."""


class NotBuiltError(PerflabError):
    """A build artifact (server, load generator, async-profiler) is missing."""


class ServerStartError(PerflabError):
    """The server process exited or never became ready."""


class LoadError(PerflabError):
    """The load generator failed (non-zero exit, unreadable output)."""


class ProfilerError(PerflabError):
    """async-profiler could not be attached, started or stopped."""


class BridgeError(PerflabError):
    """The in-process JVM (JPype) could not be started or a Java call failed."""


class MissedReadsError(PerflabError):
    """A load's reads did not find their keys: the store does not hold what the script reads, so no rate of it
    measures the server."""


class BuildError(PerflabError):
    """A commit could not be exported or built."""


class RunInterrupted(BaseException):
    """A run was stopped by SIGTERM (Ctrl-C arrives as KeyboardInterrupt). Like KeyboardInterrupt it is no
    ``Exception``: an ``except Exception`` meant for a failing host, process or file must not swallow it (a
    SIGTERM during a wait on a remote host once read as "the host stopped answering")."""
