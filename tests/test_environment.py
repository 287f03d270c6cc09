"""environment.yml (for conda users) must agree with pyproject.toml (what the Makefile installs)."""

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent


def _load():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return env, project


def _conda_deps(env):
    return [d for d in env["dependencies"] if isinstance(d, str)]


def _pip_section(env):
    sections = [d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one pip: section"
    return sections[0]


def test_python_version_satisfies_requires_python():
    env, project = _load()
    pins = [d for d in _conda_deps(env) if re.match(r"python\s*[=<>]", d)]
    assert len(pins) == 1, f"environment.yml must pin python exactly once, found {pins}"
    version = re.split(r"[=<>]+", pins[0], maxsplit=1)[1].strip()
    assert SpecifierSet(project["requires-python"]).contains(version + ".0"), (
        f"environment.yml python {version} does not satisfy requires-python {project['requires-python']}"
    )


def test_java_is_openjdk_17_and_pip_is_present():
    env, _ = _load()
    deps = _conda_deps(env)
    assert any(re.fullmatch(r"openjdk\s*=\s*17(\..*)?", d) for d in deps), f"openjdk=17 missing in {deps}"
    assert "pip" in deps


def test_pip_section_installs_this_package_with_every_extra():
    env, project = _load()
    local = [e for e in _pip_section(env) if re.fullmatch(r'(-e\s+)?"?\.(\[[^\]]*\])?"?', e.strip())]
    assert len(local) == 1, "the pip: section must install the package itself ('-e .[...]')"
    extras = re.search(r"\[([^\]]*)\]", local[0])
    listed = {x.strip() for x in extras.group(1).split(",")} if extras else set()
    declared = set(project.get("optional-dependencies", {}))
    assert listed == declared, f"pip: section extras {sorted(listed)} != pyproject extras {sorted(declared)}"


def test_no_python_package_is_declared_twice():
    # A Python library listed as a conda dependency as well as in pyproject.toml could resolve to
    # two different versions; pyproject.toml is the single source of the Python dependencies.
    env, project = _load()
    runtime = {Requirement(r).name.lower() for r in project["dependencies"]}
    for extra in project.get("optional-dependencies", {}).values():
        runtime |= {Requirement(r).name.lower() for r in extra}
    conda_names = {re.split(r"[=<>\s]", d, maxsplit=1)[0].lower() for d in _conda_deps(env)}
    assert not (conda_names & runtime), f"declared in both files: {sorted(conda_names & runtime)}"
    extra_pip = [e for e in _pip_section(env) if not e.strip().startswith(("-e", "."))]
    assert not extra_pip, f"pip: section must only install the package itself, found {extra_pip}"
