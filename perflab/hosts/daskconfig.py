"""How every Dask process perflab starts or uses is set up, in one place.

**No sampling profiler.** Dask's worker profiler calls ``sys._current_frames()`` every 10 ms while a task or
an actor call runs (``distributed.worker.profile``, on by default). On Python 3.11 that call holds the
runtime's HEAD_LOCK while it makes frame objects; a garbage collection there can run a finalizer that hands
the GIL to another thread, and a thread that then starts a thread (``threading.Thread.start``: perflab's
agents do, for every process they watch) waits for HEAD_LOCK while holding the GIL. Neither ever runs again,
and no signal handler either (cpython gh-106883, gh-116969; ``scripts/deadlock_repro.py`` shows it on this
Python). The same flag keeps Dask's event-loop profiler (off on 3.11 anyway, on elsewhere) from starting.
Nothing else in Dask samples ``sys._current_frames`` periodically (``get_call_stack`` answers a request
only; the system monitor reads psutil). perflab applies this to the in-process hosts (:data:`CONFIG`), to
the processes ``perflab scheduler``/``perflab worker`` start (:func:`environ`), and to any worker a session
uses, however it was started (:func:`profiler_off`, run on it before the session's agents start).

**Nothing served that nobody reads.** A Dask scheduler and each worker start an HTTP server (metrics,
health, the dashboard) even without a dashboard, on every interface by default. The in-process hosts bind
theirs to loopback (:data:`LOOPBACK_HTTP`) and close them once started (:func:`close_http`): their
scheduler and worker talk over ``inproc://``, so the process listens on no port at all.
"""

from __future__ import annotations

#: the settings of every Dask process perflab starts (dask.config keys)
CONFIG = {"distributed.worker.profile.enabled": False}
#: the periodic callbacks of a worker that sample ``sys._current_frames``
PROFILER_CALLBACKS = ("profile", "profile-cycle")
#: where an in-process scheduler's or worker's HTTP server listens until it is closed
LOOPBACK_HTTP = "127.0.0.1:0"


def environ() -> dict[str, str]:
    """:data:`CONFIG` as the environment variables Dask reads when it starts (``DASK_A__B__C``)."""
    return {"DASK_" + key.upper().replace(".", "__").replace("-", "_"): repr(value) for key, value in CONFIG.items()}


def profiler_off(dask_worker) -> bool:
    """Stop a worker's sampling profiler (run on its event loop: ``Client.run``); ``True`` if it was on."""
    was_on = False
    for name in PROFILER_CALLBACKS:
        pc = dask_worker.periodic_callbacks.pop(name, None)
        if pc is not None:
            was_on = was_on or pc.is_running()
            pc.stop()
    return was_on


def profiler_state(dask_worker) -> dict:
    """What a worker's profiler is: ``sampling``, the sampling callbacks it runs now, and ``configured``, its
    process's setting now (the in-process hosts' worker is made under :data:`CONFIG`, which the rest of the
    coordinator's process does not get: a notebook's own Dask work keeps Dask's defaults)."""
    import dask

    running = dask_worker.periodic_callbacks
    return {
        "configured": dask.config.get("distributed.worker.profile.enabled"),
        "sampling": sorted(n for n in PROFILER_CALLBACKS if n in running and running[n].is_running()),
    }


def _stop_scheduler_http(dask_scheduler) -> None:
    dask_scheduler.http_server.stop()


def _stop_worker_http(dask_worker) -> None:
    if dask_worker.http_server is not None:
        dask_worker.http_server.stop()


def close_http(client) -> None:
    """Close the HTTP servers of ``client``'s scheduler and workers (the in-process hosts': nobody reads them)."""
    client.run_on_scheduler(_stop_scheduler_http)
    client.run(_stop_worker_http)
