"""Hostile hook output, a hostile caller and the Python API: nothing hangs, nothing leaks,
nothing is left behind.  (How the runner ends hostile hooks is in test_runner.py; hostile input
events are in test_input.py.)

Every hook here is a real process and every case pins its exact outcome.  "Nothing left behind"
is checked after each case: each hostile script first writes its process group id to pgid.txt,
and the group must have no live member once magihook returns; magihook runs with TMPDIR set to a
fresh folder, which must be empty again (most cases send a > 1 MiB full payload, so a payload_ref
file is really made and has to be removed); open descriptors are counted in-process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from conftest import (
    MAGIHOOK,
    PROMPT,
    SPILLED,
    after_event,
    assert_group_gone,
    bash_event,
    hostile,
    run_cli,
    run_hook,
    terminal,
    write_script,
    write_settings,
)
from conftest import full_hook as hook

import magihook

# --- 1. hostile hook output ---------------------------------------------------------------------

GARBAGE = r"printf '\xff\xfe\x00\x1b[31mred\x1b]0;title\x07\x9b2J\r\n'"


def assert_clean_output(result):
    """One JSON line, and not one raw control byte, NUL or invalid UTF-8 anywhere."""
    raw = (result.stdout + result.stderr).encode("utf-8")
    assert result.stdout.count("\n") == 1
    assert [byte for byte in raw if byte < 0x20 and byte != 0x0A] == []
    assert "\ufffd" not in result.stdout + result.stderr


def test_hook_printing_invalid_utf8_nul_and_escapes(project, tmpdir_env):
    command = hostile(project, "%s\n%s >&2\nexit 5\n" % (GARBAGE, GARBAGE))
    result, _ = run_hook(project, tmpdir_env, hook(command))
    assert terminal(result) == ("failed", "exit", "hook exited with status 5")
    assert result.json["warnings"] == [
        "hook h (before_tool #0, bash) failed: exit: hook exited with status 5"]
    assert_clean_output(result)
    assert_group_gone(project)


def test_injecting_hook_printing_garbage_injects_nothing(project, tmpdir_env):
    command = hostile(project, GARBAGE + "\n")
    result, _ = run_hook(project, tmpdir_env, hook(command, provider_context_injection=True),
                         phase="after_tool")
    audit = result.events("hook_context_injection")[0]["payload"]
    assert (terminal(result), audit["status"], result.json["context_items"]) == (
        ("success", None, None), "invalid_json", [])
    assert_clean_output(result)


def test_injected_escapes_are_json_escaped_and_scrubbed_from_display(project, tmpdir_env):
    item = {"context_items": [{"role": "user", "content": "a\u001b[31mb\u0000c\u0007d"}]}
    command = hostile(project, "cat >/dev/null\nprintf '%%s' '%s'\n" % json.dumps(item))
    config = write_settings(project, {
        "enabled": True, "injected_content": {"show_in_transcript": True},
        "after_tool": [hook(command, provider_context_injection=True)]})
    result = run_cli("run", "--phase", "after_tool", "--config", str(config),
                     event=after_event(content=SPILLED), cwd=project, env=tmpdir_env)
    # The provider gets the item exactly (the spec's contract); the terminal row gets no escapes.
    assert result.json["context_items"] == item["context_items"]
    assert result.json["display"][0]["content"] == ["abcd"]
    assert_clean_output(result)


# --- 2. magihook itself: signals, a vanished reader, odd descriptors ----------------------------

def default_signals():
    """preexec_fn: the CLI starts with default dispositions even if this test run was started
    with some ignored (a background job in a script ignores SIGINT)."""
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def start_cli(project, env, hook_def, event, preexec_fn=default_signals):
    config = write_settings(project, {"enabled": True, "before_tool": [hook_def]})
    (project / "event.json").write_text(json.dumps(event))
    with open(project / "event.json", "rb") as stdin:
        return subprocess.Popen(
            [sys.executable, str(MAGIHOOK), "run", "--phase", "before_tool", "--config",
             str(config)], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            cwd=project, env=env, preexec_fn=preexec_fn)


def wait_for(path):
    deadline = time.monotonic() + PROMPT
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, "the hook never started"
        time.sleep(0.01)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_during_a_hook_ends_its_group_and_removes_payload_files(project, tmpdir_env,
                                                                       signum):
    command = hostile(project, "sleep 1000 &\nsleep 1000\n")
    process = start_cli(project, tmpdir_env, hook(command, timeout_seconds=60),
                        bash_event(SPILLED))
    wait_for(project / "pgid.txt")
    assert len(os.listdir(tmpdir_env["TMPDIR"])) == 1  # the payload_ref folder exists now
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=PROMPT)
    name = signal.Signals(signum).name
    assert (process.returncode, stdout, stderr) == (
        128 + signum, b"", b"magihook: interrupted by %s; hook processes were ended\n"
        % name.encode())
    assert_group_gone(project, strict=signum == signal.SIGTERM)


def test_a_signal_the_caller_ignores_stays_ignored(project, tmpdir_env):
    # Under nohup, SIGHUP is ignored; magihook must not turn it back into an exit.
    command = hostile(project, "until [ -e go ]; do sleep 0.01; done\nexit 0\n")
    process = start_cli(project, tmpdir_env, hook(command), bash_event(SPILLED),
                        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    wait_for(project / "pgid.txt")
    process.send_signal(signal.SIGHUP)
    time.sleep(0.1)
    (project / "go").write_text("")
    stdout, stderr = process.communicate(timeout=PROMPT)
    assert (process.returncode, stderr) == (0, b"")
    assert json.loads(stdout)["events"][1]["payload"]["status"] == "success"


@pytest.mark.parametrize("args, code", [
    (["run", "--phase", "before_tool"], 0),
    (["run", "--phase", "before_tool", "--blocking"], 3),
    (["schema"], 0),
    (["--version"], 0),
    (["--help"], 0),
])
def test_a_reader_that_closes_stdout_gets_no_traceback(project, args, code):
    blocking = "--blocking" in args
    args = [arg for arg in args if arg != "--blocking"]
    if args[0] == "run":
        policy = "block" if blocking else "warn"
        config = write_settings(project, {"enabled": True, "before_tool": [
            hook("exit 1", failure_policy=policy)]})
        args += ["--config", str(config)]
    process = subprocess.Popen([sys.executable, str(MAGIHOOK), *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project)
    process.stdout.close()  # the reader is gone before magihook writes a byte
    _, stderr = process.communicate(json.dumps(bash_event()).encode(), timeout=60)
    assert (process.returncode, stderr) == (code, b"")


def test_unwritable_stdout_is_one_line_on_stderr(project):
    config = write_settings(project, {"enabled": True, "before_tool": [hook("true")]})
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, str(MAGIHOOK), "run", "--phase", "before_tool", "--config",
             str(config)], input=json.dumps(bash_event()).encode(), stdout=full,
            stderr=subprocess.PIPE, cwd=project, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"magihook: cannot write to stdout (ENOSPC)\n")


def test_closed_stdin_is_an_empty_event(project):
    done = subprocess.run([sys.executable, str(MAGIHOOK), "run", "--phase", "before_tool"],
                          stdin=None, capture_output=True, cwd=project, timeout=60,
                          preexec_fn=lambda: os.close(0))
    assert (done.returncode, done.stdout, done.stderr) == (
        2, b"", b"magihook: input is empty: expected one JSON object\n")


def test_closed_stdout_and_stderr_are_no_traceback(project):
    config = write_settings(project, {"enabled": True, "before_tool": [hook("exit 1")]})
    for args, code in ((["run", "--phase", "before_tool", "--config", str(config)], 0),
                       (["run"], 2)):
        done = subprocess.run([sys.executable, str(MAGIHOOK), *args],
                              input=json.dumps(bash_event()).encode(), cwd=project, timeout=60,
                              preexec_fn=lambda: (os.close(1), os.close(2)))
        assert done.returncode == code


def test_non_blocking_stdin_is_waited_for(project):
    # Some callers (Node.js) hand over non-blocking pipes: the event arrives later, not never.
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    process = subprocess.Popen([sys.executable, str(MAGIHOOK), "run", "--phase", "before_tool"],
                               stdin=read_end, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               cwd=project)
    os.close(read_end)
    time.sleep(0.3)
    os.write(write_end, json.dumps(bash_event()).encode())
    os.close(write_end)
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stderr, json.loads(stdout)["verdict"]) == (0, b"", "continue")


def test_non_blocking_stdout_is_waited_on(project):
    # The result (the after_tool result echoed back) is far bigger than a pipe's buffer, and the
    # reader is slow to start: magihook must wait for it, not fail with EAGAIN.
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    event = after_event(content="z" * 300_000)
    process = subprocess.Popen([sys.executable, str(MAGIHOOK), "run", "--phase", "after_tool"],
                               stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE,
                               cwd=project)
    os.close(write_end)
    process.stdin.write(json.dumps(event).encode())
    process.stdin.close()
    time.sleep(0.3)
    with os.fdopen(read_end, "rb") as reader:
        stdout = reader.read()
    stderr = process.stderr.read()
    assert (process.wait(60), stderr) == (0, b"")
    assert json.loads(stdout)["tool_result"] == event["result"]


# --- 3. nothing left behind in the Python API ---------------------------------------------------

def open_descriptors():
    return sorted(os.listdir("/proc/self/fd"))


def children_of_this_process():
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me:
                found.append(entry)
    return found


def test_api_leaves_no_descriptor_temp_file_or_child(project, tmp_path, monkeypatch):
    fresh = tmp_path / "api-tmp"
    fresh.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(fresh))  # where payload_ref folders are made
    write_script(project, "bg.sh", "#!/bin/bash\nsleep 1000 &\nexit 0\n")
    write_script(project, "garbage.sh", "#!/bin/bash\n%s\n%s >&2\n" % (GARBAGE, GARBAGE))
    write_script(project, "inject.sh", "#!/bin/bash\ncat >/dev/null\n"
                 "echo '{\"context_items\": [{\"role\": \"user\", \"content\": \"m\"}]}'\n")
    commands = ["true", "exit 3", "kill -KILL 0", "./bg.sh", "./garbage.sh", "./inject.sh",
                "head -c 1000000 /dev/zero", "./missing.sh", "cd /"]
    settings = magihook.settings_from_document({"hooks": {
        "enabled": True, "show_in_tui": True,
        "injected_content": {"show_in_transcript": True, "show_in_activity_tree": True},
        "after_tool": [{"command": c, "payload": "full", "provider_context_injection": True}
                       for c in commands],
        "before_tool": [{"command": "sleep 1000", "timeout_seconds": 1, "payload": "full"}]}})
    session = project / "sessions" / "s.jsonl"
    before = open_descriptors(), children_of_this_process()
    for index in range(8):
        event = after_event(content=SPILLED if index % 2 else "small")
        event["context"] = {"cwd": str(project if index % 4 else project / "missing")}
        result = magihook.run_phase(settings, "after_tool", event, session_path=str(session))
        assert result["verdict"] == "continue"
    blocked = magihook.run_phase(settings, "before_tool", bash_event(SPILLED), cwd=str(project))
    assert blocked["events"][1]["payload"]["category"] == "timeout"
    assert (open_descriptors(), children_of_this_process()) == before
    assert os.listdir(fresh) == []
