#!/usr/bin/env python3
"""Where in perflab's imports does Python lose a Ctrl-C? A real SIGINT at every STRIDE-th Python call.

The imports run once under a trace function; at every ``--stride``-th call it forks, and the child raises SIGINT
in itself (``signal.raise_signal``) and goes on importing. Each child ends in one of four ways, counted here: the
KeyboardInterrupt propagated out of the import (as it should); it came out as another error (Python's class
creation wraps it in a RuntimeError); the import completed with the Ctrl-C swallowed, and then either
``perflab.interrupt.check()`` (what the command line's main() runs first) raised it again, or nothing did: LOST.
``--default-handler`` leaves Python's own SIGINT handler (what perflab had before issue 46), otherwise
``perflab.interrupt.install()`` runs first, as ``python -m perflab`` does. ``--show N`` prints where the first N
swallowed ones were (a weakref callback of importlib's module locks, a ``__del__``, pickle's module lookup...).

  .venv/bin/python scripts/ctrl_c_injection.py --stride 97 --default-handler --show 5
  .venv/bin/python scripts/ctrl_c_injection.py --stride 97
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stride", type=int, default=97, help="a SIGINT at every this many calls (default 97)")
    ap.add_argument("--default-handler", action="store_true", help="Python's own SIGINT handler, not perflab's")
    ap.add_argument("--show", type=int, default=0, help="print where the first N swallowed Ctrl-Cs landed")
    a = ap.parse_args()
    # perflab.interrupt alone, before the package (whose __init__ imports everything, under the trace here)
    sys.path.insert(0, str(REPO))
    spec = importlib.util.spec_from_file_location("perflab.interrupt", REPO / "perflab" / "interrupt.py")
    interrupt = importlib.util.module_from_spec(spec)
    sys.modules["perflab.interrupt"] = interrupt
    spec.loader.exec_module(interrupt)
    if not a.default_handler:
        assert interrupt.install()
    where_dir = Path(tempfile.mkdtemp(prefix="perflab-ctrl-c-injection-"))
    state = {"calls": 0, "child": False, "where": ""}
    counts: collections.Counter = collections.Counter()
    names = {0: "propagated", 1: "another error", 3: "swallowed: LOST", 4: "swallowed, raised again by check()"}

    def tracer(frame, event, arg):
        if state["child"] or event != "call":
            return None
        state["calls"] += 1
        if state["calls"] % a.stride == 0:
            pid = os.fork()
            if pid == 0:
                state["child"] = True
                state["where"] = "".join(traceback.format_stack(frame, limit=8))
                sys.settrace(None)
                signal.raise_signal(signal.SIGINT)
                return None
            _, status = os.waitpid(pid, 0)
            counts[names.get(os.waitstatus_to_exitcode(status), "other")] += 1
        return None

    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(2)
    os.dup2(devnull, 2)  # "Exception ignored in ..." from every child that swallows one
    sys.settrace(tracer)
    try:
        __import__("perflab.cli")
        ended = None
    except BaseException as e:  # noqa: BLE001 - a child's interrupt, sorted below
        ended = e
    sys.settrace(None)
    if state["child"]:
        if ended is None:
            (where_dir / f"{os.getpid()}.txt").write_text(state["where"])
            try:
                interrupt.check()
            except KeyboardInterrupt:
                os._exit(4)
            os._exit(3)
        os._exit(0 if isinstance(ended, KeyboardInterrupt) else 1)
    os.dup2(saved, 2)
    handler = "Python's own handler" if a.default_handler else "perflab.interrupt installed"
    print(
        f"{state['calls']:,} calls, a SIGINT at every {a.stride}th ({handler}): "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )
    for f in sorted(where_dir.iterdir())[: a.show]:
        print(f"\n--- swallowed here:\n{f.read_text()}")
    for f in where_dir.iterdir():
        f.unlink()
    where_dir.rmdir()
    return 1 if counts["swallowed: LOST"] else 0


if __name__ == "__main__":
    sys.exit(main())
