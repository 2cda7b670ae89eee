"""`--session PATH`: one JSON line per event, in order, 0600, locked appends shared by processes."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import time

import pytest
from conftest import (
    MAGIHOOK_ARGV,
    WENT_ON,
    after_event,
    bash_event,
    run_cli,
    warning_lines,
    write_script,
    write_settings,
)

import magihook


def lines_of(path):
    return path.read_bytes().split(b"\n")


def records(path):
    """Every line of a session file, parsed; the file must end with a newline."""
    raw = lines_of(path)
    assert raw[-1] == b""
    return [json.loads(line) for line in raw[:-1]]


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def config(project):
    write_script(project, "ok.sh", "#!/bin/sh\ncat >/dev/null\n")
    return write_settings(project, {"enabled": True, "before_tool": [{"command": "./ok.sh"}]})


def run_with_session(project, config, session, event=None):
    return run_cli("run", "--phase", "before_tool", "--config", str(config), "--session",
                   str(session), event=event or bash_event(), cwd=project)


# --- the file -----------------------------------------------------------------------------------

def test_every_event_is_one_line_in_result_order(project):
    write_script(project, "mem.sh", "#!/bin/sh\ncat >/dev/null\n"
                 "echo '{\"context_items\": [{\"role\": \"user\", \"content\": \"m\"}]}'\n")
    config = write_settings(project, {"enabled": True, "after_tool": [
        {"command": "./mem.sh", "provider_context_injection": True},
        {"command": "exit 2"}]})
    session = project / "s.jsonl"
    result = run_cli("run", "--phase", "after_tool", "--config", str(config), "--session",
                     str(session), event=after_event(), cwd=project)
    assert records(session) == result.json["events"]
    assert [e["type"] for e in records(session)] == [
        "hook_lifecycle", "hook_lifecycle", "hook_context_injection", "hook_lifecycle",
        "hook_lifecycle", "hook_diagnostic", "provider_context_item"]


def test_file_is_created_0600_with_its_folders_0700(project, tmp_path):
    settings = magihook.settings_from_document(
        {"hooks": {"enabled": True, "before_tool": [{"command": "true"}]}})
    session = tmp_path / "sessions" / "subagents" / "child.jsonl"
    old = os.umask(0)  # so the modes seen are the ones magihook asked for
    try:
        result = magihook.run_phase(settings, "before_tool", bash_event(),
                                    session_path=str(session), cwd=str(project))
    finally:
        os.umask(old)
    assert records(session) == result["events"]
    assert mode(session) == 0o600
    assert mode(session.parent) == mode(session.parent.parent) == 0o700


def test_existing_file_is_appended_and_keeps_its_mode(project, config):
    session = project / "s.jsonl"
    session.write_bytes(b'{"type": "tool_call"}\n')
    session.chmod(0o640)
    first = run_with_session(project, config, session)
    second = run_with_session(project, config, session)
    assert records(session) == [{"type": "tool_call"}] + first.json["events"] + (
        second.json["events"])
    assert mode(session) == 0o640


def test_no_matching_hook_creates_no_file(project, config, tmp_path):
    session = tmp_path / "new" / "s.jsonl"
    event = {"tool": {"name": "mcp_fetch", "call_id": "c"}, "request": {}}
    assert run_with_session(project, config, session, event).json["events"] == []
    assert not session.parent.exists()


# --- a torn last line ---------------------------------------------------------------------------

def test_torn_last_line_stays_one_skippable_line(project, config):
    session = project / "s.jsonl"
    torn = b'{"type": "hook_lifecycle", "timestamp": "2026-05-26T00:0'
    session.write_bytes(torn)
    first = run_with_session(project, config, session)
    second = run_with_session(project, config, session)
    raw = lines_of(session)
    assert raw[0] == torn
    assert raw[-1] == b""
    assert [json.loads(line) for line in raw[1:-1]] == (
        first.json["events"] + second.json["events"])


# --- locking and concurrency --------------------------------------------------------------------

def test_append_waits_for_the_exclusive_lock(project, config):
    session = project / "s.jsonl"
    (project / "event.json").write_text(json.dumps(bash_event()))
    holder = os.open(str(session), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with open(project / "event.json", "rb") as stdin:
            process = subprocess.Popen(
                [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--config",
                 str(config), "--session", str(session)], cwd=project, stdin=stdin,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # The wait polls (it is bounded, see test_records.py), so no /proc/locks entry shows
        # it; well inside SESSION_LOCK_WAIT_SECONDS magihook is still waiting, having written
        # nothing.
        time.sleep(0.1)
        assert process.poll() is None, process.stderr.read()
        assert session.read_bytes() == b""
    finally:
        os.close(holder)  # releases the lock
    stdout, _ = process.communicate(timeout=30)
    assert process.returncode == 0
    assert records(session) == json.loads(stdout)["events"]
    assert json.loads(stdout)["warnings"] == []


def test_32_concurrent_processes_lose_and_interleave_nothing(project):
    # Each run writes 4 lines, the last ~12 KB, so a write that was not whole would show.
    write_script(project, "big.sh", "#!/bin/sh\ncat >/dev/null\ncat big.json\n")
    content = "x" * 12000
    (project / "big.json").write_text(json.dumps(
        {"context_items": [{"role": "user", "content": content}]}))
    config = write_settings(project, {"enabled": True, "after_tool": [
        {"command": "./big.sh", "provider_context_injection": True,
         "provider_context_max_bytes": 16384, "stdout_max_bytes": 65536}]})
    session = project / "shared.jsonl"
    processes = []
    for index in range(32):
        process = subprocess.Popen(
            [*MAGIHOOK_ARGV, "run", "--phase", "after_tool", "--config",
             str(config), "--session", str(session)], cwd=project, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        processes.append((index, process))
    results = {}
    for index, process in processes:
        stdout, stderr = process.communicate(json.dumps(after_event(call_id="call_%d" % index)
                                                        ).encode(), timeout=120)
        assert (process.returncode, stderr) == (0, b"")
        results["call_%d" % index] = json.loads(stdout)["events"]
    written = records(session)
    assert len(written) == 32 * 4
    assert sorted(map(json.dumps, written)) == sorted(
        json.dumps(e) for events in results.values() for e in events)
    for call_id, events in results.items():
        mine = [e for e in written if e["payload"].get("tool_call_id") == call_id]
        assert len(mine) == 3
        assert mine == [e for e in events if "tool_call_id" in e["payload"]]
        assert mine[-1]["payload"]["content"] == content


# --- best effort --------------------------------------------------------------------------------

@pytest.mark.parametrize("where, errno_name", [
    ("dir", "EISDIR"), ("file/s.jsonl", "ENOTDIR"), ("file/sub/s.jsonl", "ENOTDIR"),
    ("/dev/full", "ENOSPC"),
])
def test_unwritable_session_warns_and_the_call_goes_on(project, where, errno_name):
    (project / "dir").mkdir()
    (project / "file").write_text("")
    if where == "/dev/full" and not os.path.exists(where):
        pytest.skip("no /dev/full")
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"command": "true"}, {"label": "gate", "command": "exit 1"}]})
    result = run_cli("run", "--phase", "before_tool", "--config", str(config), "--session",
                     where, event=bash_event(), cwd=project)
    assert (result.returncode, result.stderr, result.json["verdict"]) == (
        0, warning_lines(result.json), "continue")
    assert result.json["warnings"] == [
        "session file could not be written (%s); the rest of this call's events are only in "
        "its result" % errno_name,
        "hook gate (before_tool #1, bash) failed: exit: hook exited with status 1" + WENT_ON]
    assert len(result.json["events"]) == 5


@pytest.mark.parametrize("name", ["a\x00b.jsonl", "\ud800/s.jsonl"])
def test_an_api_session_path_no_file_can_have_warns_and_the_call_goes_on(project, name):
    # Only the Python API can pass one (argv holds no NUL, and its only lone surrogates stand
    # for bytes): os.open and os.mkdir raise ValueError for it, which is no OSError, and
    # run_phase once let it out instead of warning as for any session file it cannot write.
    settings = magihook.settings_from_document({"hooks": {"enabled": True, "before_tool": [
        {"command": "true"}, {"label": "gate", "command": "exit 1"}]}})
    result = magihook.run_phase(settings, "before_tool", bash_event(), cwd=str(project),
                                session_path=os.path.join(str(project), name))
    assert (result["verdict"], result["warnings"]) == ("continue", [
        "session file could not be written (EINVAL); the rest of this call's events are only in "
        "its result",
        "hook gate (before_tool #1, bash) failed: exit: hook exited with status 1" + WENT_ON])
    assert len(result["events"]) == 5
    assert os.listdir(str(project)) == []


# --- the agent's own records in the same file (README "Sessions and subagents") -----------------

def test_agent_records_and_hook_records_follow_the_spec_order(project):
    write_script(project, "mem.sh", "#!/bin/sh\ncat >/dev/null\n"
                 "echo '{\"context_items\": [{\"role\": \"user\", \"content\": \"m\"}]}'\n")
    settings = magihook.settings_from_document({"hooks": {
        "enabled": True, "before_tool": [{"command": "true"}],
        "after_tool": [{"command": "./mem.sh", "provider_context_injection": True}]}})
    session = str(project / "sessions" / "s.jsonl")
    event = after_event()
    with magihook.SessionFile(session) as records_file:
        records_file.append({"type": "tool_call", "payload": event["tool"]})
        before = magihook.run_phase(settings, "before_tool", bash_event(), session_path=session,
                                    cwd=str(project))
        records_file.append({"type": "tool_result", "payload": {"success": True}})
        after = magihook.run_phase(settings, "after_tool", event, session_path=session,
                                   cwd=str(project))
    written = records(project / "sessions" / "s.jsonl")
    assert [e["type"] for e in written] == [
        "tool_call", "hook_lifecycle", "hook_lifecycle", "tool_result", "hook_lifecycle",
        "hook_lifecycle", "hook_context_injection", "provider_context_item"]
    assert written[1:3] == before["events"] and written[4:] == after["events"]
