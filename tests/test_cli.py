"""Section 17 (CLI): what an internal error prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, bash_event, write_settings

# --- internal errors ----------------------------------------------------------------------------
# An internal error is a bug, so one is injected here (a magihook function replaced by a broken
# one) into a real magihook process; MAGIHOOK_DEBUG=1 adds its traceback to the one short line.

BROKEN = r"""
import sys, magihook

def broken(*args, **kwargs):
    raise ZeroDivisionError("a bug")

magihook.matching_hooks = broken
sys.argv[1:] = %r
magihook.console_main()
"""


def run_broken(project, argv, stdin, debug):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MAGIHOOK_DEBUG", None)
    if debug:
        env["MAGIHOOK_DEBUG"] = "1"
    return subprocess.run([sys.executable, "-c", BROKEN % (argv,)], input=stdin,
                          capture_output=True, cwd=project, timeout=60, env=env)


def assert_traceback(stderr, first_line):
    lines = stderr.decode().splitlines()
    assert lines[0] == first_line
    assert lines[1] == "Traceback (most recent call last):"
    assert "in broken" in stderr.decode()
    assert lines[-1] == "ZeroDivisionError: a bug"


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_in_run_is_one_line_or_its_traceback(project, debug):
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "h", "command": "true"}]})
    done = run_broken(project, ["run", "--phase", "before_tool", "--config", str(config)],
                      json.dumps(bash_event()).encode(), debug)
    line = "magihook: internal error (ZeroDivisionError); please report it"
    assert (done.returncode, done.stdout) == (1, b"")
    if debug:
        assert_traceback(done.stderr, line)
    else:
        assert done.stderr.decode() == line + "\n"


@pytest.mark.parametrize("debug", [False, True])
def test_an_internal_error_in_adapt_denies_and_debug_shows_its_traceback(project, debug):
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "h", "command": "true"}]})
    event = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(project),
             "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}
    done = run_broken(project, ["adapt", "claude-code", "--config", str(config)],
                      json.dumps(event).encode(), debug)
    assert done.returncode == 0
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer["systemMessage"].startswith("magihook: internal error (ZeroDivisionError)")
    if debug:
        lines = done.stderr.decode().splitlines()
        assert lines[0] == "Traceback (most recent call last):"
        assert "in broken" in done.stderr.decode()
        assert lines[-1] == "ZeroDivisionError: a bug"
    else:
        assert done.stderr == b""
