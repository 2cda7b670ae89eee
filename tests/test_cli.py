"""Section 17 (CLI): main() called from a host program, and what an internal error prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, bash_event, write_settings

# --- main() from a host -------------------------------------------------------------------------
# A host program that calls magihook.main(argv) keeps its descriptors 0-2 and its sys streams as
# they were: only console_main (the `magihook` command) makes them blocking or points a dead one
# at /dev/null (tests/test_hostile.py pins that the command still does).

HOST = r"""
import json, os, sys
import magihook

report, event, stdout_state, argv = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
# stdin: a pipe that already holds the whole event (and its EOF), so that a non-blocking read
# cannot come too early.
read_end, write_end = os.pipe()
with open(event, "rb") as source:
    os.write(write_end, source.read())
os.close(write_end)
os.dup2(read_end, 0)
os.close(read_end)
if stdout_state == "dead":  # a reader that went away: a write fails with EPIPE
    read_end, write_end = os.pipe()
    os.close(read_end)
    os.dup2(write_end, 1)
    os.close(write_end)
for fd in (0, 1, 2):
    os.set_blocking(fd, False)


def state():
    fds = {}
    for fd in (0, 1, 2):
        st = os.fstat(fd)
        fds[fd] = [os.get_blocking(fd), st.st_dev, st.st_ino, st.st_mode, st.st_rdev]
    return fds


streams = (sys.stdin, sys.stdout, sys.stderr, sys.stdin.buffer, sys.stdout.buffer,
           sys.stderr.buffer)
before = state()
code = magihook.main(argv)
after = state()
same_streams = [a is b for a, b in zip(streams, (sys.stdin, sys.stdout, sys.stderr,
                                                 sys.stdin.buffer, sys.stdout.buffer,
                                                 sys.stderr.buffer))]
with open(report, "w") as out:
    json.dump({"code": code, "before": before, "after": after, "same_streams": same_streams}, out)
os._exit(0)  # a dead stdout's buffered bytes are the host's own business, not this test's
"""


def run_host(tmp_path, project, argv, stdout_state):
    event = tmp_path / "event.json"
    event.write_text(json.dumps(bash_event(phase="before_tool")) + "\n")
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-c", HOST, str(report), str(event), stdout_state, json.dumps(argv)],
        stdin=subprocess.DEVNULL, capture_output=True, cwd=project, timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    return done, json.loads(report.read_text())


@pytest.mark.parametrize("stdout_state", ["live", "dead"])
@pytest.mark.parametrize("mode", [["--phase", "before_tool"], ["--stream"]])
def test_main_from_a_host_leaves_its_descriptors_and_streams(tmp_path, project, mode,
                                                             stdout_state):
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "h", "command": "cat >/dev/null"}]})
    done, report = run_host(tmp_path, project, ["run", *mode, "--config", str(config)],
                            stdout_state)
    assert report["code"] == 0
    assert [flags[0] for flags in report["before"].values()] == [False, False, False]
    assert report["after"] == report["before"]
    assert report["same_streams"] == [True] * 6
    if stdout_state == "live":
        assert json.loads(done.stdout)["verdict"] == "continue"


EMPTY_NON_BLOCKING_STDIN = r"""
import os, sys
import magihook

read_end, write_end = os.pipe()  # the writer is still there, and has written nothing yet
os.dup2(read_end, 0)
os.set_blocking(0, False)
code = magihook.main(["run", "--phase", "before_tool"])
sys.stderr.flush()
os._exit(code)
"""


def test_a_hosts_non_blocking_stdin_with_no_event_yet_is_a_read_error(project):
    # main() leaves the host's non-blocking stdin as it is: a read finds nothing (EAGAIN), which
    # is a bad input (exit 2), not an internal error.
    done = subprocess.run([sys.executable, "-c", EMPTY_NON_BLOCKING_STDIN], capture_output=True,
                          cwd=project, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert (done.returncode, done.stdout, done.stderr) == (
        2, b"", b"magihook: cannot read the input event (EAGAIN)\n")


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
