"""Records in a hostile world (issue 15, items 3 and 6): a session lock nobody releases, many
writers at once, and call ids or turn ids that look like credentials."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import (
    MAGIHOOK,
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

LOCK_WARNING = ("session file stayed locked by another process for %d s; this call's records "
                "were written without the lock" % magihook.SESSION_LOCK_WAIT_SECONDS)


def records(path, blank_lines=False):
    """Every line of a session file as JSON.  BLANK_LINES: empty lines are allowed (and
    skipped): without the lock, the newline that closes a torn last line can race another
    writer's append and stand alone (documented; readers skip it)."""
    raw = path.read_bytes().split(b"\n")
    assert raw[-1] == b""
    return [json.loads(line) for line in raw[:-1] if line or not blank_lines]


class LockHolder:
    """A real process holding an exclusive flock on PATH (as a hook's stray child would) until
    it is ended; entered once it says it holds the lock."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        holder = ("import fcntl, os, sys, time\n"
                  "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
                  "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                  "print('locked', flush=True)\n"
                  "time.sleep(3600)\n")
        self.process = subprocess.Popen([sys.executable, "-c", holder, str(self.path)],
                                        stdout=subprocess.PIPE, start_new_session=True)
        assert self.process.stdout.readline() == b"locked\n"
        return self

    def __exit__(self, *exc_info):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.process.stdout.close()


@pytest.fixture
def config(project):
    write_script(project, "ok.sh", "#!/bin/sh\ncat >/dev/null\n")
    return write_settings(project, {"enabled": True, "before_tool": [
        {"command": "./ok.sh"}, {"label": "gate", "command": "exit 1"}]})


def test_a_lock_held_forever_is_waited_for_a_bound_then_records_are_written(project, config):
    session = project / "s.jsonl"
    with LockHolder(session):
        started = time.monotonic()
        result = run_cli("run", "--phase", "before_tool", "--config", str(config), "--session",
                         str(session), event=bash_event(), cwd=project, timeout=120)
        waited = time.monotonic() - started
        # Written while the holder still holds the lock: whole lines, every event, in order.
        assert records(session) == result.json["events"]
    assert (result.returncode, result.stderr) == (0, warning_lines(result.json))
    assert len(result.json["events"]) == 5
    assert result.json["warnings"] == [
        LOCK_WARNING, "hook gate (before_tool #1, bash) failed: exit: hook exited with status 1"
        + WENT_ON]
    # It did wait (a lower bound: a busy machine only makes it longer), once for the whole call.
    assert waited >= magihook.SESSION_LOCK_WAIT_SECONDS


def test_the_lock_is_taken_again_once_the_holder_is_gone(project, config):
    session = project / "s.jsonl"
    with magihook.SessionFile(str(session)) as writer:
        with LockHolder(session):
            assert writer.append({"n": 1}) == LOCK_WARNING
            assert writer.append({"n": 2}) is None  # given up: no second wait, no second warning
        assert writer.append({"n": 3}) is None
    assert records(session) == [{"n": 1}, {"n": 2}, {"n": 3}]
    with magihook.SessionFile(str(session)) as writer:
        assert writer.append({"n": 4}) is None
    assert records(session)[-1] == {"n": 4}


@pytest.mark.parametrize("held", [False, True], ids=["locked", "lock-held-by-another"])
def test_64_concurrent_writers_lose_and_tear_nothing(project, held):
    # Each run writes 4 lines, the last ~12 KB, so a write that was not whole would show; with
    # the lock held by another process throughout, all 64 write at once without it.
    write_script(project, "big.sh", "#!/bin/sh\ncat >/dev/null\ncat big.json\n")
    content = "y" * 12000
    (project / "big.json").write_text(json.dumps(
        {"context_items": [{"role": "user", "content": content}]}))
    config = write_settings(project, {"enabled": True, "after_tool": [
        {"command": "./big.sh", "provider_context_injection": True,
         "provider_context_max_bytes": 16384, "stdout_max_bytes": 65536}]})
    session = project / "shared.jsonl"
    holder = LockHolder(session)
    if held:
        holder.__enter__()
    try:
        results = run_concurrently(project, config, session, 64)
        written = records(session, blank_lines=held)
    finally:
        if held:
            holder.__exit__()
    assert len(written) == 64 * 4
    assert sorted(map(json.dumps, written)) == sorted(
        json.dumps(e) for events, _ in results.values() for e in events)
    for call_id, (events, warnings) in results.items():
        assert warnings == ([LOCK_WARNING] if held else [])
        mine = [e for e in written if e["payload"].get("tool_call_id") == call_id]
        assert mine == [e for e in events if "tool_call_id" in e["payload"]]
        assert mine[-1]["payload"]["content"] == content


def run_concurrently(project, config, session, count):
    processes = []
    for index in range(count):
        process = subprocess.Popen(
            [*MAGIHOOK_ARGV, "run", "--phase", "after_tool", "--config",
             str(config), "--session", str(session)], cwd=project, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        processes.append((index, process))
    # Every event is handed over before any result is read, so all of them run at once.
    for index, process in processes:
        process.stdin.write(json.dumps(after_event(call_id="call_%d" % index)).encode())
        process.stdin.close()
    results = {}
    for index, process in processes:
        stdout, stderr = process.stdout.read(), process.stderr.read()
        process.wait(timeout=300)
        process.stdout.close()
        process.stderr.close()
        result = json.loads(stdout)
        assert (process.returncode, stderr.decode()) == (0, warning_lines(result))
        results["call_%d" % index] = (result["events"], result["warnings"])
    return results


def test_a_fifo_at_the_session_path_is_refused_and_the_call_goes_on(project, config):
    # A hook knows the session path (it is in its payload) and can swap a FIFO in.  This held
    # before issue 15 too (seeking the end of a FIFO fails first); pinned, as it must not block.
    session = project / "s.jsonl"
    os.mkfifo(str(session))
    result = run_cli("run", "--phase", "before_tool", "--config", str(config), "--session",
                     str(session), event=bash_event(), cwd=project, timeout=120)
    assert (result.returncode, result.stderr) == (0, warning_lines(result.json))
    assert result.json["warnings"][0] == (
        "session file could not be written (ESPIPE); the rest of this call's events are only "
        "in its result")
    assert len(result.json["events"]) == 5


def test_records_larger_than_a_fifo_s_buffer_never_block(project):
    session = project / "s.jsonl"
    os.mkfifo(str(session))
    writer = ("import sys, magihook\n"
              "try:\n"
              "    magihook.SessionFile(sys.argv[1]).append({'x': 'y' * 200000})\n"
              "except OSError as exc:\n"
              "    print(exc.errno == __import__('errno').ESPIPE)\n")
    completed = subprocess.run([sys.executable, "-c", writer, str(session)], cwd=str(MAGIHOOK.parent),
                               capture_output=True, text=True, timeout=60)
    assert (completed.stdout, completed.stderr) == ("True\n", "")


# --- call ids and turn ids ----------------------------------------------------------------------

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_credential_shaped_call_id_is_redacted_in_every_record(project, config):
    assert magihook.redact_credentials(SECRET) != SECRET
    session = project / "s.jsonl"
    result = run_cli("run", "--phase", "before_tool", "--config", str(config), "--session",
                     str(session), event=bash_event(call_id=SECRET), cwd=project)
    written = session.read_text()
    assert SECRET not in written
    assert SECRET not in json.dumps(result.json["events"])
    payload = result.json["events"][0]["payload"]
    assert payload["tool_call_id"] == magihook.REDACTION_MARKER
    assert payload["activity_id"] == "hook:%s:before_tool:0" % magihook.REDACTION_MARKER
    # The caller's own call id comes back unchanged where the agent matches its call.
    assert result.json["tool"]["call_id"] == SECRET


def test_a_credential_shaped_turn_id_is_redacted_in_message_records(project):
    write_script(project, "ok.sh", "#!/bin/sh\ncat >/dev/null\n")
    config = write_settings(project, {"enabled": True, "after_assistant": [
        {"command": "./ok.sh"}]})
    session = project / "s.jsonl"
    result = run_cli("run", "--phase", "after_assistant", "--config", str(config), "--session",
                     str(session), event={"text": "hi", "context": {"turn_id": SECRET}},
                     cwd=project)
    assert SECRET not in session.read_text()
    assert SECRET not in json.dumps(result.json["events"])
    payload = records(session)[0]["payload"]
    assert payload["tool_call_id"] == "assistant-" + magihook.REDACTION_MARKER


def test_control_characters_in_a_call_id_are_not_recorded(project, config):
    call_id = "call_\x1b[2J\x1b]0;pwned\x07\nforged\u202e" + "z" * 300
    result = run_cli("run", "--phase", "before_tool", "--config", str(config),
                     event=bash_event(call_id=call_id), cwd=project)
    payload = result.json["events"][0]["payload"]
    assert payload["tool_call_id"] == magihook.sanitize_message(call_id, 128)
    assert len(payload["tool_call_id"]) == 128
    assert not any(c in payload["tool_call_id"] for c in "\x1b\x07\n\u202e")
    assert payload["activity_id"] == "hook:%s:before_tool:0" % payload["tool_call_id"]


def test_display_rows_carry_the_sanitized_call_id_too(project):
    write_script(project, "mem.sh", "#!/bin/sh\ncat >/dev/null\n"
                 "echo '{\"context_items\": [{\"role\": \"user\", \"content\": \"m\"}]}'\n")
    config = write_settings(project, {
        "enabled": True, "show_in_tui": True,
        "injected_content": {"show_in_activity_tree": True, "show_in_transcript": True},
        "after_tool": [{"command": "./mem.sh", "provider_context_injection": True}]})
    result = run_cli("run", "--phase", "after_tool", "--config", str(config),
                     event=after_event(call_id=SECRET), cwd=project)
    display = result.json["display"]
    assert {row.get("parent_activity_id") for row in display} == {magihook.REDACTION_MARKER, None}
    assert SECRET not in json.dumps(display) + json.dumps(result.json["events"])


def test_a_hook_s_detached_child_holding_the_lock_cannot_hang_the_call(project):
    # The attack: the hook starts a child in a new session that takes the lock on the
    # session file (its path is in the payload's context) and keeps it.
    session = project / "s.jsonl"
    holder = project / "holder.py"
    holder.write_text("import fcntl, os, sys, time\n"
                      "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
                      "fcntl.flock(fd, fcntl.LOCK_EX)\n"
                      "open('holder.pid', 'w').write(str(os.getpid()))\n"
                      "os.rename('holder.pid', 'holder.ready')\n"
                      "time.sleep(3600)\n")
    write_script(project, "evil.sh", "#!/bin/sh\ncat >/dev/null\n"
                 "setsid %s holder.py %s </dev/null >/dev/null 2>&1 &\n"
                 "while [ ! -e holder.ready ]; do sleep 0.01; done\n" % (sys.executable, session))
    config = write_settings(project, {"enabled": True, "before_tool": [{"command": "./evil.sh"}]})
    try:
        result = run_cli("run", "--phase", "before_tool", "--config", str(config), "--session",
                         str(session), event=bash_event(), cwd=project, timeout=120)
        assert (result.returncode, result.stderr) == (0, warning_lines(result.json))
        assert result.json["warnings"] == [LOCK_WARNING]
        assert records(session) == result.json["events"]
        assert [e["payload"]["status"] for e in records(session)] == ["started", "success"]
    finally:
        if (project / "holder.ready").exists():
            os.kill(int((project / "holder.ready").read_text()), signal.SIGKILL)
