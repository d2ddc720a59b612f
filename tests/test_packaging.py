"""How Recall's packages install: from the checkout, never one of ours resolved from an index.

On the public index `recall-core` and `recall-sqlite` are other projects' names; a requirement
on any of our distributions made a plain `pip install -e .` look it up there (and fail on an
unrelated recall-sqlite 0.2.0). So none of our pyproject files may require another of ours,
and a core installed alone must say what to add.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from recall_testkit.serverproc import free_port, recall_cli

ROOT = Path(__file__).resolve().parent.parent


def _pyprojects() -> list[Path]:
    return [ROOT / "pyproject.toml", *sorted(ROOT.glob("plugins/*/pyproject.toml")),
            *sorted(ROOT.glob("examples/*/pyproject.toml")),
            *sorted(ROOT.glob("tests/*/pyproject.toml"))]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;@(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_no_package_of_ours_requires_another_by_name():
    files = _pyprojects()
    ours = {tomllib.loads(f.read_text())["project"]["name"] for f in files}
    assert {"recall-core", "recall-sqlite", "recall-extractors", "recall-embeddings",
            "recall-postgres"} <= ours
    for f in files:
        project = tomllib.loads(f.read_text())["project"]
        reqs = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            reqs += extra
        wrong = sorted({_name(r) for r in reqs} & ours)
        assert not wrong, f"{f.relative_to(ROOT)} requires {wrong}: pip would look them up on an index"


def test_core_alone_names_the_plugins_to_install(tmp_path):
    env = {"RECALL_DISABLE_PLUGINS": "sqlite,extractors,embeddings,postgres,newest"}
    proc = recall_cli("serve", "--db", str(tmp_path / "r.db"), "--port", str(free_port()),
                      check=False, env=env, timeout=30)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "pip install -e plugins/sqlite" in proc.stderr and "not on PyPI" in proc.stderr
    env["RECALL_DISABLE_PLUGINS"] = "extractors,embeddings"
    proc = recall_cli("serve", "--db", str(tmp_path / "r.db"), "--port", str(free_port()),
                      check=False, env=env, timeout=30)
    assert proc.returncode == 2 and "pip install -e plugins/extractors" in proc.stderr


def test_readme_commands_install_from_paths_only():
    readme = (ROOT / "README.md").read_text()
    commands = [line for line in readme.splitlines() if line.startswith("pip install ")]
    assert len(commands) >= 2
    for line in commands:
        args = [a.strip("'") for a in line.split("&&")[0].split()[2:]]
        named = [a for a in args if not a.startswith("-")
                 and not a.startswith((".", "plugins/", "examples/", "tests/"))]
        assert not named, f"README installs {named} by name: {line}"
        assert "torch" not in line, line


def test_the_readme_test_command_installs_pinned_versions_and_the_test_helpers():
    # A fresh venv resolved pytest 9.2, with which schemathesis 4.32 fails: the test command
    # installs the versions the suite last passed with; .ci/run runs that very line.
    readme = (ROOT / "README.md").read_text()
    (command,) = [line for line in readme.splitlines()
                  if line.startswith("pip install ") and "python -m pytest" in line]
    assert command.startswith("pip install -c tests/constraints.txt ") and "-e tests/testkit" in command
    pins = {}
    for line in (ROOT / "tests" / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version and "+" not in version, f"not an exact, index-wide pin: {line}"
            pins[name.lower().replace("_", "-")] = version
    ours = {tomllib.loads(f.read_text())["project"]["name"] for f in _pyprojects()}
    assert not ours & set(pins), "the constraints must not pin our own packages"
    assert pins["pytest"] and pins["schemathesis"]
    testkit = tomllib.loads((ROOT / "tests" / "testkit" / "pyproject.toml").read_text())
    assert testkit["project"]["name"] == "recall-testkit"
    assert "grep -m1 '^pip install -c tests/constraints.txt ' README.md" in (ROOT / ".ci" / "run").read_text()


def test_default_tox_envs_install_no_torch():
    import configparser

    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    default_envs = tox["tox"]["env_list"].replace(",", " ").split()
    for env in ["testenv", *(f"testenv:{e}" for e in default_envs)]:
        deps = tox[env].get("deps", "") if env in tox else ""
        assert "torch" not in deps, (env, deps)
