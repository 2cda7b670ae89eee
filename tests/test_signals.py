"""Signal bursts at real moments of a call (issue 15): SIGTERM, SIGINT and SIGHUP back to back.

Each case starts the real CLI, waits for an observable moment (its handlers installed, per
/proc/PID/status; a payload_ref folder appearing; a hook's marker file), sends a burst, then pins
the outcome: exit 128+N with one stderr line naming N (a signal of the burst), nothing on stdout,
every hook process group dead, TMPDIR empty, and a terminal record for every started hook.
Signals sent together are delivered in the order the system chooses (Linux: lowest number
first), so "the first" is checked exactly only where the first was handled before the next sent.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import (
    MAGIHOOK_ARGV,
    PROMPT,
    RECORD_PGID,
    SPILLED,
    bash_event,
    default_signals,
    live_members,
    write_script,
    write_settings,
)

TERM, INT, HUP = signal.SIGTERM, signal.SIGINT, signal.SIGHUP
BURSTS = [(TERM, HUP), (HUP, TERM), (INT, TERM), (TERM, INT, HUP), (HUP, INT, TERM), (INT, INT)]
BLOCK = RECORD_PGID + "echo > marker-$1\nsleep 1000 &\nsleep 1000\n"
QUICK = RECORD_PGID + "echo > marker-$1\nexit 0\n"


def caught_signals(pid):
    """The signals the process has handlers for (SigCgt of /proc/PID/status)."""
    try:
        status = Path("/proc", str(pid), "status").read_text()
    except OSError:
        return set()
    mask = int(status.split("SigCgt:")[1].split()[0], 16)
    return {number for number in range(1, 65) if mask & (1 << (number - 1))}


def blocked_reading_stdin(pid):
    """The process sleeps in read() on descriptor 0 (/proc/PID/syscall; elsewhere than x86-64 and
    arm64 only that it sleeps)."""
    try:
        syscall = Path("/proc", str(pid), "syscall").read_text().split()
        state = Path("/proc", str(pid), "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    number = {"x86_64": "0", "aarch64": "63"}.get(platform.machine())
    return state == "S" and (number is None or syscall[:2] == [number, "0x0"])


def await_true(predicate, what):
    deadline = time.monotonic() + PROMPT
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def start(project, env, hooks, stdin):
    config = write_settings(project, {"enabled": True, "before_tool": hooks})
    return subprocess.Popen(
        [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--config", str(config),
         "--session", str(project / "session.jsonl")],
        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project, env=env,
        preexec_fn=default_signals)


def hook_def(project, name, body, **fields):
    write_script(project, name, body.replace("pgid.txt", "pgid-%s.txt" % name))
    return dict({"label": name, "command": "./%s %s" % (name, name), "payload": "full",
                 "timeout_seconds": 60}, **fields)


def assert_aftermath(project, process, burst, first=None):
    stdout, stderr = process.communicate(timeout=PROMPT)
    code = process.returncode - 128
    assert code in burst, (process.returncode, stderr)
    if first is not None:
        assert code == first
    name = signal.Signals(code).name
    assert (stdout, stderr) == (
        b"", b"magihook: interrupted by %s; hook processes were ended\n" % name.encode())
    for path in project.glob("pgid-*.txt"):
        pgid = int(path.read_text())
        await_true(lambda pgid=pgid: not live_members(pgid), "group %d still runs" % pgid)
    session = project / "session.jsonl"
    records = [json.loads(line)["payload"] for line in session.read_text().splitlines()] if (
        session.exists()) else []
    started = [r["activity_id"] for r in records if r["status"] == "started"]
    ended = [r["activity_id"] for r in records if r["status"] in ("success", "failed")]
    assert started == ended, records
    return records


def write_event(project, event):
    path = project / "event.json"
    path.write_text(json.dumps(event))
    return open(path, "rb")


def send(process, burst):
    for signum in burst:
        os.kill(process.pid, signum)


@pytest.mark.parametrize("burst", BURSTS)
def test_burst_while_reading_the_event(project, tmpdir_env, burst):
    read_end, write_end = os.pipe()
    process = start(project, tmpdir_env, [hook_def(project, "a.sh", BLOCK)], read_end)
    os.close(read_end)
    try:
        os.write(write_end, b'{"tool": ')  # a writer that has not finished
        await_true(lambda: {TERM, INT, HUP} <= caught_signals(process.pid), "no handlers")
        # Blocked in read(0, ...): a signal now interrupts it.  (One that lands in the instant
        # before the read starts waits for the writer: documented.)
        await_true(lambda: blocked_reading_stdin(process.pid), "not reading its event")
        send(process, burst)
        assert_aftermath(project, process, burst)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("burst", BURSTS)
def test_burst_while_the_payload_file_is_made_and_the_hook_starts(project, tmpdir_env, burst):
    folder = Path(tmpdir_env["TMPDIR"])
    with write_event(project, bash_event(SPILLED)) as stdin:
        process = start(project, tmpdir_env, [hook_def(project, "a.sh", BLOCK)], stdin)
    await_true(lambda: any(folder.iterdir()), "no payload_ref folder")
    send(process, burst)
    records = assert_aftermath(project, process, burst)
    if records:
        assert records[-1]["message"].startswith("hook was ended: magihook was interrupted by")


@pytest.mark.parametrize("burst", BURSTS)
def test_burst_while_a_hook_runs(project, tmpdir_env, burst):
    with write_event(project, bash_event(SPILLED)) as stdin:
        process = start(project, tmpdir_env, [hook_def(project, "a.sh", BLOCK)], stdin)
    await_true((project / "marker-a.sh").exists, "the hook never started")
    send(process, burst)
    records = assert_aftermath(project, process, burst)
    assert [r["status"] for r in records] == ["started", "failed"]
    assert records[1]["category"] == "runner"


@pytest.mark.parametrize("burst", BURSTS)
def test_burst_while_a_hook_ends_and_the_next_starts(project, tmpdir_env, burst):
    # The first hook exits as the burst comes: it lands in its cleanup, the second's records,
    # payload, spawn or wait; the second never exits by itself, so magihook is still running.
    hooks = [hook_def(project, "a.sh", QUICK), hook_def(project, "b.sh", BLOCK)]
    with write_event(project, bash_event(SPILLED)) as stdin:
        process = start(project, tmpdir_env, hooks, stdin)
    await_true((project / "marker-a.sh").exists, "the first hook never started")
    send(process, burst)
    assert_aftermath(project, process, burst)


def test_the_first_signal_handled_names_the_exit_code(project, tmpdir_env):
    with write_event(project, bash_event(SPILLED)) as stdin:
        process = start(project, tmpdir_env, [hook_def(project, "a.sh", BLOCK)], stdin)
    await_true((project / "marker-a.sh").exists, "the hook never started")
    os.kill(process.pid, TERM)
    pgid = int((project / "pgid-a.sh.txt").read_text())
    await_true(lambda: not live_members(pgid), "the hook was not ended")
    # magihook is in its cleanup or about to exit: the later signals change nothing.
    for signum in (HUP, INT):
        try:
            os.kill(process.pid, signum)
        except ProcessLookupError:
            break
    assert_aftermath(project, process, (TERM,), first=TERM)


@pytest.mark.parametrize("burst", BURSTS[:3])
def test_burst_while_a_stream_waits_between_events(project, tmpdir_env, burst):
    config = write_settings(project, {"enabled": True, "before_tool": [
        hook_def(project, "a.sh", QUICK)]})
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        [*MAGIHOOK_ARGV, "run", "--stream", "--config", str(config), "--session",
         str(project / "session.jsonl")], stdin=read_end, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, cwd=project, env=tmpdir_env, preexec_fn=default_signals)
    os.close(read_end)
    try:
        os.write(write_end, json.dumps(dict(bash_event(), phase="before_tool")).encode() + b"\n")
        answer = process.stdout.readline()  # the first event's result: now it waits for more
        assert json.loads(answer)["verdict"] == "continue"
        send(process, burst)
        stdout, stderr = process.communicate(timeout=PROMPT)
        code = process.returncode - 128
        assert code in burst and stdout == b""
        assert stderr == b"magihook: interrupted by %s; hook processes were ended\n" % (
            signal.Signals(code).name.encode())
    finally:
        os.close(write_end)
