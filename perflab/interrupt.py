"""Ctrl-C that always ends a command: a SIGINT remembered until the command line's top has seen it.

Python turns SIGINT into a KeyboardInterrupt raised wherever the main thread happens to be, and a few places
lose it for good: a weakref callback or a finalizer (``__del__``) the garbage collector runs (every import
drops one of importlib's module locks that way: ``_get_module_lock.<locals>.cb``), C code that clears the
error it sees (pickle looking a module up), ``__set_name__`` wrapping it in a RuntimeError that an ``except
Exception`` takes. About one Ctrl-C in a hundred during perflab's seconds of imports met one of them, and the
run went on as if nothing had been pressed (issue 46).

:func:`install` (``python -m perflab`` and the ``perflab`` script run it before their imports) keeps the first
Ctrl-C until :func:`delivered` says the command line's top has it: it is raised as usual, and a watchdog thread
raises it again in the main thread every :data:`REDELIVER_S` while the main thread is not unwinding it (not in
an ``except`` or ``finally`` handling a KeyboardInterrupt, or an error raised from one). What stops the
children runs in those handlers, so neither the watchdog nor a second Ctrl-C cuts it short; a Ctrl-C
:data:`FORCE_S` or more after the first while that cleanup still runs kills the children perflab started
(their process groups) and exits 130 at once. One that escapes before the top (an import's) ends with
"interrupted" and 130 as well.

Nothing changes for a caller that imports perflab (a notebook, a test): only the command line installs it.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time

#: how often a Ctrl-C that the main thread is not unwinding is raised again
REDELIVER_S = 1.0
#: from how long after the first Ctrl-C another one stops waiting for the cleanup: children killed, exit 130
FORCE_S = 10.0

_first: float | None = None  # time.monotonic() of the first SIGINT, None before one
_done = False  # the command line's top has it (or the command ended otherwise)
_wake = threading.Event()  # set by the first SIGINT: the watchdog starts looking
_installed = False


def launched_as_command() -> bool:
    """Whether this process is perflab's command line: ``python -m perflab ...`` or the ``perflab`` script."""
    argv = list(getattr(sys, "orig_argv", None) or [])[1:]  # the interpreter's options, up to what it runs
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg in ("-X", "-W"):
            skip = True
        elif arg == "-m":
            return i + 1 < len(argv) and argv[i + 1].split(".")[0] == "perflab"
        elif arg.startswith("-m"):
            return arg[2:].split(".")[0] == "perflab"
        elif arg == "-c" or not arg.startswith("-"):
            break
    return bool(sys.argv) and os.path.basename(sys.argv[0]) == "perflab"


def install() -> bool:
    """Make Ctrl-C sticky in this process (idempotent): from the main thread, where SIGINT still has Python's
    own handler (one ignored, a background job's, stays ignored; one someone else installed stays theirs)."""
    global _installed
    if _installed:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    signal.signal(signal.SIGINT, _on_sigint)
    sys.excepthook = _uncaught(sys.excepthook)
    atexit.register(_exiting)  # the first registered, the last to run
    threading.Thread(target=_watch, name="perflab-ctrl-c", daemon=True).start()
    _installed = True
    return True


def received() -> bool:
    """A Ctrl-C came that the command line's top has not seen yet."""
    return _first is not None and not _done


def check() -> None:
    """Raise KeyboardInterrupt for a Ctrl-C that came and was lost on its way (at the start of a command:
    the imports before it may have swallowed it)."""
    if received():
        _lost()
        raise KeyboardInterrupt


def delivered() -> None:
    """The command is over (its top caught the interrupt, or it ended otherwise): nothing to raise again."""
    global _done
    _done = True


def _exiting() -> None:
    """The last thing before Python exits (its other exit functions have run: the children are stopped):
    Ctrl-C ignored from here on. Python would put SIGINT back to its default action as it finalizes, and a
    Ctrl-C then killed the process on its way out, its exit status lost."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


def _interrupt_in(e: BaseException | None) -> bool:
    """Whether ``e`` is a KeyboardInterrupt (or the SIGTERM's RunInterrupted), or was raised from or while
    handling one."""
    todo, seen = [e], set()
    while todo:
        x = todo.pop()
        if x is None or id(x) in seen:
            continue
        if isinstance(x, KeyboardInterrupt) or type(x).__name__ == "RunInterrupted":
            return True
        seen.add(id(x))
        todo += [x.__cause__, x.__context__]
    return False


def _main_unwinding() -> bool:
    """From another thread: whether the main thread is handling an interrupt (in an ``except`` or ``finally``)."""
    active = sys._current_exceptions().get(threading.main_thread().ident)
    return _interrupt_in(active[1] if isinstance(active, tuple) else active)


def _on_sigint(signum, frame):
    global _first
    now = time.monotonic()
    first = _first is None
    if first:
        _first = now
        _wake.set()
    if not threading.main_thread().is_alive():  # the interpreter is exiting: its cleanup runs
        return
    if _done or _interrupt_in(sys.exc_info()[1]):
        # an interrupt is unwinding (or was handled): what stops the children runs now, and is not cut short
        if not first and now - _first >= FORCE_S:
            _force()
        return
    if not first:
        _lost()  # the first one was lost on its way: again
    raise KeyboardInterrupt


def _lost() -> None:
    os.write(2, b"perflab: the Ctrl-C was lost on its way (Python swallowed it); raised again\n")


def _uncaught(previous):
    """``sys.excepthook`` for what escapes before the command line's top (the imports): a Ctrl-C, or the
    error an import turned it into (``__set_name__``'s RuntimeError), ends with "interrupted" and 130, like
    one the top caught (nothing has started that a cleanup would stop)."""

    def hook(kind, value, tb):
        if received() and _interrupt_in(value):
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say there
                    pass
            os.write(2, b"interrupted\n")
            atexit._run_exitfuncs()  # what exiting would run (a temporary directory's finalizer), then 130
            os._exit(130)
        previous(kind, value, tb)

    return hook


def _watch() -> None:
    _wake.wait()
    while True:
        time.sleep(REDELIVER_S)
        main = threading.main_thread()
        if _done or not main.is_alive():
            return
        if _main_unwinding():
            continue
        try:
            signal.pthread_kill(main.ident, signal.SIGINT)  # to the main thread: a blocking call returns
        except (OSError, ValueError):
            return


def _force() -> None:
    """Kill the process groups of the children perflab started and exit 130, without a lock or a buffer (the
    main thread may hold either where this handler interrupted it)."""
    children = sys.modules.get("perflab.children")
    procs = list(getattr(children, "_live", {}).values()) if children is not None else []
    for p in procs:
        for kill in (lambda: os.killpg(p.pid, signal.SIGKILL), lambda: os.kill(p.pid, signal.SIGKILL)):
            try:
                kill()
            except OSError:
                pass
    try:
        os.write(2, f"interrupted again: {len(procs)} children killed, cleanup left unfinished\n".encode())
    finally:
        os._exit(130)
