"""The lab's copy of the server's option list (perflab/config/server_options.json, which ServerConfig
and the metric names are built from) against the built server: no stale copy. The docs tables are
checked against each program's own list by that program's tests (java-server DocsMatchSpecTest,
loadgen cli::contract_doc_lists_the_extensions)."""

import dataclasses
import json
import subprocess

from perflab import jdk
from perflab.config import ServerConfig, server_options
from perflab.config.fields import spec_of


def test_the_labs_copy_of_the_server_option_list_is_the_built_servers(server_build):
    java = jdk.home() / "bin" / "java"
    out = subprocess.run(
        [str(java), "-cp", str(server_build / "lib" / "*"), "perflab.server.Main", "--options-json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert json.loads(out) == server_options(), "perflab/config/server_options.json is stale: run make setup"


def test_every_server_option_is_a_server_config_field_with_its_default():
    fields = {f.name: f for f in dataclasses.fields(ServerConfig)}
    for o in server_options()["options"]:
        if o["key"] in ("host", "port", "data-dir", "config"):  # the lab sets these per run
            continue
        name = o["key"].replace("-", "_")
        assert name in fields and spec_of(fields[name]) is not None, o["key"]
