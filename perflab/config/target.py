"""``ForeignServer``: a server perflab did not build (bring your own).

Either a ``command`` that perflab starts, with ``{port}`` replaced by a free port (``{host}`` by the address to
listen on, ``{dir}`` by a fresh directory for its data under the run's scratch storage; a cluster node's
``{cluster}``, ``{self}`` and ``{index}`` as a cluster of one), waits for until the port answers HTTP, and
stops afterwards like the built-in server; or the ``url`` of a server that is
already running (never started or stopped), with its ``pid`` found from the listening socket when not
given. perflab measures it with the same generator, validity record, profiles (any HotSpot JVM) and
reports; what only the built-in server has (its flags, prefill, ``/v0/stats``) is refused or skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .fields import Params, option

#: the placeholders of your server's command: its port, the address to listen on, a fresh data directory; and
#: a cluster node's (a cluster of one: ``{cluster}`` and ``{self}`` are its own URL, ``{index}`` is 0), so one
#: command serves a single server and the nodes of a cluster
PLACEHOLDERS = ("{port}", "{host}", "{dir}", "{cluster}", "{self}", "{index}")


def check_placeholders(name: str, command: str, known: tuple[str, ...]) -> None:
    """Every ``{word}`` in ``command`` is one of ``known``, or a ``ValueError`` naming it (it would reach the
    server as it is: a directory named ``{dir}`` in the wrong place, a port named ``{prot}``)."""
    for word in re.findall(r"\{[a-z_]+\}", command):
        if word not in known:
            raise ValueError(f"{name}: unknown placeholder {word} in {command!r} (known: {', '.join(known)})")


@dataclass(frozen=True)
class ForeignServer(Params):
    """A server started from ``command`` (``{port}`` -> a free port) or already running at ``url``."""

    command: str | None = option(
        None, "text", "command that starts your server; {port} becomes a free port", optional=True, flag="--server-cmd"
    )
    url: str | None = option(None, "text", "URL of your server, already running (http://127.0.0.1:PORT)", optional=True)
    pid: int | None = option(
        None, "int", "pid of the server at --url (default: found from its listening socket)", optional=True, min=1
    )
    workdir: str | None = option(
        None, "path", "directory the command runs in (default: the current one)", optional=True, flag="--server-dir"
    )
    ready_path: str = option("/", "text", "path polled until the server answers (any HTTP status counts)")
    startup_timeout: float = option(60.0, "duration", "how long a started server may take to answer", min=0.5)
    label: str | None = option(
        None,
        "text",
        "a short name for your server in reports (default: its command's program)",
        optional=True,
        flag="--server-label",
    )

    def _check(self):
        if (self.command is None) == (self.url is None):
            raise ValueError("command/url: give exactly one: a command perflab starts, or the url of a running server")
        if self.command is not None:
            if "{port}" not in self.command:
                raise ValueError(
                    f"command: must contain {{port}} (perflab picks a free port and substitutes it), "
                    f"got {self.command!r}"
                )
            check_placeholders("command", self.command, PLACEHOLDERS)
        if self.url is not None:
            if not re.fullmatch(r"http://[^/\s:]+:\d+/?", self.url):
                raise ValueError(f"url: expected http://HOST:PORT, got {self.url!r}")
            self._set("url", self.url.rstrip("/"))
        if self.workdir is not None:
            if self.command is None:
                raise ValueError("workdir: only with command (a running server has its own)")
            if not Path(self.workdir).is_dir():
                raise ValueError(f"workdir: {self.workdir} is not a directory")
            self._set("workdir", str(Path(self.workdir).resolve()))
        if self.pid is not None and self.url is None:
            raise ValueError("pid: only with url (perflab knows the pid of a server it starts)")
        if not self.ready_path.startswith("/"):
            raise ValueError(f"ready_path: must start with '/', got {self.ready_path!r}")

    @property
    def name(self) -> str:
        """What reports call it: ``label``; else its program (a Java command's jar or main class, a script's
        file), not the whole command line; else its URL."""
        if self.label:
            return self.label
        if self.command is None:
            return self.url
        words = self.command.split()
        prog = words[0].rsplit("/", 1)[-1]
        if prog.startswith("python") or prog == "java":
            rest, skip = [], False
            for w in words[1:]:
                if skip:
                    skip = False
                elif w in ("-cp", "-classpath", "--class-path", "-m"):
                    skip = True
                elif w == "-jar":
                    continue
                elif not w.startswith("-"):
                    rest.append(w)
            return rest[0].rsplit("/", 1)[-1] if rest else prog
        return prog

    @property
    def mode(self) -> str:
        """Stands in for ``ServerConfig.mode`` in run names."""
        return "foreign"
