"""Never open: the lab's certificates (``perflab certs``), ``perflab scheduler`` and ``perflab worker`` over TLS on
loopback (no root needed; the namespace hosts of tests/hosts/test_netns_hosts.py run the same over a bridge),
and the words for a scheduler that takes plain TCP."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest
from support import REPO, free_port

from perflab.config.hosts import HostOptions
from perflab.hosts.daemons import scheduler_command, scheduler_warning, worker_command
from perflab.hosts.daskconfig import environ, profiler_state
from perflab.hosts.pool import HostsError, connect, disconnect
from perflab.hosts.tls import FILES, TlsError, files, is_loopback, make, open_warning, security


def test_certs_are_made_once_private_and_refused_when_missing(tmp_path):
    made = make(tmp_path / "tls")
    assert sorted(p.name for p in made) == sorted([*FILES, "ca.key"])
    assert stat.S_IMODE(os.stat(tmp_path / "tls").st_mode) == 0o700
    assert all(stat.S_IMODE(os.stat(tmp_path / "tls" / k).st_mode) == 0o600 for k in ("ca.key", "key.pem"))
    with pytest.raises(TlsError, match="already holds"):
        make(tmp_path / "tls")
    assert security(tmp_path / "tls").require_encryption
    (tmp_path / "tls" / "key.pem").unlink()
    with pytest.raises(TlsError, match="no key.pem in .*perflab certs"):
        files(tmp_path / "tls")


def test_tls_goes_with_a_tls_address_and_plain_tcp_beyond_loopback_is_named_a_risk(tmp_path):
    with pytest.raises(ValueError, match="tls: the scheduler tls://10.0.0.1:8786 takes TLS; give"):
        HostOptions(scheduler="tls://10.0.0.1")
    with pytest.raises(ValueError, match="certificates given for a plain-TCP scheduler"):
        HostOptions(scheduler="tcp://10.0.0.1", tls=str(tmp_path))
    assert HostOptions(tls=str(tmp_path)).tls is None  # this machine alone: nothing to secure
    assert all(is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "::ffff:127.0.0.1", "127.1.2.3"))
    assert not any(is_loopback(h) for h in ("10.0.0.1", "0.0.0.0", "example.org"))
    assert open_warning("tcp://127.0.0.1:8786") is None and open_warning("tls://10.0.0.1:8786") is None
    assert "anyone who connects to it can run any code" in open_warning("tcp://10.0.0.1:8786")
    assert scheduler_warning("10.0.0.1", 8786, None) and scheduler_warning("10.0.0.1", 8786, "/x") is None


def test_the_daemons_command_lines_carry_perflabs_settings(tmp_path):
    make(tmp_path)
    w = worker_command("tls://10.0.0.1:8786", "gen1", ("generator",), "10.0.0.2", str(tmp_path))
    assert w[1:3] == ["-m", "distributed.cli.dask_worker"] and "--no-nanny" in w
    assert w[w.index("--dashboard-address") + 1] == "127.0.0.1:0" and w[w.index("--protocol") + 1] == "tls"
    assert w[w.index("--resources") + 1] == "generator=1" and w[w.index("--tls-key") + 1].endswith("key.pem")
    with pytest.raises(ValueError, match="roles: server, generator or both"):
        worker_command("tcp://x:1", "w", ("gpu",))
    with pytest.raises(ValueError, match="a tls:// scheduler needs --tls"):
        worker_command("tls://x:1", "w", ("server",))
    s = scheduler_command("10.0.0.1", 8786, str(tmp_path))
    assert s[s.index("--dashboard-address") + 1] == "10.0.0.1:8787" and s[s.index("--protocol") + 1] == "tls"
    assert environ() == {"DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False"}


def test_a_scheduler_and_a_worker_over_tls_take_the_labs_certificates_only(tmp_path):
    tls, other = tmp_path / "tls", tmp_path / "other"
    for d in (tls, other):
        r = subprocess.run(
            [sys.executable, "-m", "perflab", "certs", str(d)], cwd=REPO, capture_output=True, text=True, timeout=60
        )
        assert r.returncode == 0, r.stderr
    port = free_port()
    address = f"tls://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DASK_", "PERFLAB_"))}
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["TMPDIR"] = str(tmp_path)  # the scheduler's scratch (Dask's $TMPDIR/dask-scratch-space) in the test's own
    perflab = [sys.executable, "-m", "perflab"]
    procs = [
        subprocess.Popen(
            [*perflab, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--tls", str(tls), "--no-dashboard"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    ]
    procs.append(
        subprocess.Popen(
            [
                *perflab,
                "worker",
                address,
                "--name",
                "both",
                "--roles",
                "server,generator",
                "--host",
                "127.0.0.1",
                "--tls",
                str(tls),
                "--local-directory",
                str(tmp_path),
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                pool = connect(address, str(tls), timeout=2)
                if pool.workers():
                    break
            except HostsError:
                pass
            assert time.monotonic() < deadline, "the TLS scheduler and worker did not come up within 60 s"
            time.sleep(0.3)
        (addr,) = pool.workers()
        assert addr.startswith("tls://127.0.0.1:")
        assert pool.run(profiler_state, [addr])[addr] == {"configured": False, "sampling": []}
        from distributed import Client

        for where, sec in ((f"tcp://127.0.0.1:{port}", None), (address, security(other))):
            with pytest.raises(Exception):
                Client(where, timeout=3, set_as_default=False, security=sec).close()
    finally:
        disconnect(address)
        for p in procs[::-1]:
            p.terminate()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    assert b"warning" not in procs[0].stderr.read()  # loopback: no one else reaches it
