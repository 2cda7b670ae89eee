"""The `run` hot path stays lean: what an inert or one-hook call imports, and nothing more.

An agent pays magihook's start-up on every tool call, twice; bench/run.py measures it.  These
tests pin the part that does not need a clock: modules that a call does not use are not
imported (python -X importtime lists every import, even of modules already in sys.modules'
builtin set, so a lazy import that slips to module level shows up here).

Every child runs with `-S -I` (no site, no user site, no PYTHON* variables), the baseline too:
what site, a venv, a sitecustomize or a .pth file import first differs from one machine to the
next, and would hide an import from the listing or add one to it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import MAGIHOOK, bash_event, run_cli, write_settings

# Used only off the `run` path (validate, config --format toml, payload_ref spills, error
# messages, replay...), each costs a run its import time.
NOT_ON_RUN_PATH = {
    "argparse", "jsonschema", "tomllib", "tomli", "tomli_w", "hashlib", "tempfile", "difflib",
    "numbers", "fcntl", "encodings.utf_8_sig", "dataclasses", "typing", "inspect",
}
# `signal` is on it: every call installs the command's SignalGate (its cost: bench/README.md, "One
# signal primitive").
# Only a run that starts a hook process needs these.
HOOK_ONLY = {"subprocess", "select", "selectors", "errno"}


# Isolated and without site, so that only the command itself decides what is imported.
ISOLATED = ("-S", "-I")


@pytest.fixture(autouse=True)
def private_tmpdir(tmp_path, monkeypatch):
    """TMPDIR on an empty folder of this test's own: a call that runs a hook first sweeps the
    temporary directory, and a payload_ref folder there (another test's, running at the same
    moment) makes it check that folder's lock, which imports fcntl."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))


def imported(argv, event=None, cwd=None) -> set:
    done = subprocess.run([sys.executable, *ISOLATED, "-X", "importtime", *argv],
                          input=json.dumps(event or bash_event()).encode(), capture_output=True,
                          cwd=cwd, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()
            if line.startswith("import time:")}


def imported_modules(*args: str, baseline: str, cwd=None) -> set:
    """What a magihook call imports beyond what `python -c baseline` imports (same flags)."""
    run = imported([str(MAGIHOOK), *args], cwd=cwd)
    assert {"json", "magihook"} & run  # the listing is read at all
    return run - imported(["-c", baseline], cwd=cwd)


@pytest.mark.parametrize("hooks", [
    None,
    {"enabled": False, "before_tool": [{"command": "true"}]},
    {"enabled": True, "before_tool": [{"command": "true", "include_tools": ["read"]}]},
], ids=["no-settings", "disabled", "no-matching-hook"])
def test_an_inert_run_imports_nothing_it_does_not_use(project, hooks):
    args = ["run", "--phase", "before_tool"]
    if hooks is not None:
        args += ["--config", str(write_settings(project, hooks))]
    modules = imported_modules(*args, baseline="import json, sys; json.load(sys.stdin)",
                               cwd=project)
    assert modules & (NOT_ON_RUN_PATH | HOOK_ONLY) == set()


def test_a_run_with_one_hook_imports_only_what_running_it_needs(project):
    config = write_settings(project, {"enabled": True, "before_tool": [{"command": "true"}]})
    inert = write_settings(project, {"enabled": False, "before_tool": [{"command": "true"}]},
                           name="inert.json")
    baseline = "import json, sys; json.load(sys.stdin)"
    modules = imported_modules("run", "--phase", "before_tool", "--config", str(config),
                               baseline=baseline, cwd=project)
    # What the module itself imports (os, __future__... which site usually imports first) is in
    # an inert run too; the forbidden ones are checked on both.
    module_level = imported_modules("run", "--phase", "before_tool", "--config", str(inert),
                                    baseline=baseline, cwd=project)
    assert modules & NOT_ON_RUN_PATH == module_level & (NOT_ON_RUN_PATH | HOOK_ONLY) == set()
    # posix_spawn starts a hook whose cwd is ours: subprocess (and selectors...) stay out; the
    # poll loop is all a hook run adds.
    assert modules - module_level == {"select"}


def test_settings_with_a_byte_order_mark_are_read(project):
    path = project / "settings.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"hooks": {"enabled": False}}).encode())
    result = run_cli("run", "--phase", "before_tool", "--config", str(path), event=bash_event(),
                     cwd=project)
    assert (result.returncode, result.json["verdict"]) == (0, "continue")


@pytest.mark.parametrize("prefix", [b"", b"\xef\xbb\xbf"], ids=["plain", "after-bom"])
def test_invalid_utf8_settings_name_the_byte_after_any_bom(project, prefix):
    path = project / "settings.json"
    path.write_bytes(prefix + b'{"hooks": "\xff"}')
    result = run_cli("run", "--phase", "before_tool", "--config", str(path), event=bash_event(),
                     cwd=project)
    assert result.returncode == 2
    assert result.stderr == "magihook: %s: not valid UTF-8 at byte 11\n" % path


# A call that asks for no help (every agent's call) leaves the help table unread: reading it
# would cost every call the parse.  The count is the module's own (lru_cache), read in the child.
HELP_READS = r"""
import sys
sys.path.insert(0, sys.argv[1])
import magihook
code = magihook.main(sys.argv[2:])
sys.stderr.write("\nhelp table reads: %d\n" % magihook.command_helps.cache_info().misses)
"""


@pytest.mark.parametrize("argv", [
    ("run", "--phase", "before_tool"), ("run", "--phase", "before_tool", "--explain"),
    ("run", "--phase", "before_tool", "--help"),
], ids=["run", "explain", "asks-for-help"])
def test_a_call_reads_the_help_table_only_when_it_asks_for_help(project, argv):
    done = subprocess.run([sys.executable, *ISOLATED, "-c", HELP_READS, str(MAGIHOOK.parent),
                           *argv, "--config", str(write_settings(project, {"enabled": False}))],
                          input=json.dumps(bash_event()).encode(), capture_output=True,
                          cwd=project, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    reads = 1 if "--help" in argv else 0
    assert done.stderr.decode().endswith("\nhelp table reads: %d\n" % reads)
