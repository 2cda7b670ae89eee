"""`magihook run --stream`: one long-lived process, NDJSON events in, one line out per event."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from typing import Any, Dict, Optional

import pytest
from conftest import MAGIHOOK_ARGV, bash_event, default_signals, run_cli, write_script, write_settings

import magihook

ANSWER_SECONDS = 20  # generous: only a hang should ever reach it


class Stream:
    """A real `magihook run --stream` child, driven one line at a time."""

    def __init__(self, *args: str, cwd: Any) -> None:
        self.process = subprocess.Popen(
            [*MAGIHOOK_ARGV, "run", "--stream", *args], cwd=cwd, preexec_fn=default_signals,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def write(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def read(self) -> Dict[str, Any]:
        # The answer must come while stdin is still open: that is the per-line flush.
        ready, _, _ = select.select([self.process.stdout], [], [], ANSWER_SECONDS)
        assert ready, "no answer line within %d s" % ANSWER_SECONDS
        return json.loads(self.process.stdout.readline())

    def send(self, event: Any, phase: Optional[str] = "before_tool") -> Dict[str, Any]:
        if not isinstance(event, bytes):
            if phase is not None:
                event = dict(event, phase=phase)
            event = json.dumps(event).encode()
        self.write(event)
        return self.read()

    def finish(self) -> subprocess.CompletedProcess:
        """Close stdin (end of input) and wait for the exit."""
        out, err = self.process.communicate(timeout=ANSWER_SECONDS)
        return subprocess.CompletedProcess(self.process.args, self.process.returncode, out, err)


@pytest.fixture
def streams():
    started = []

    def start(*args: str, cwd: Any) -> Stream:
        stream = Stream(*args, cwd=cwd)
        started.append(stream)
        return stream

    yield start
    for stream in started:
        if stream.process.poll() is None:
            stream.process.kill()
            stream.process.wait()


def labels(result: Dict[str, Any]) -> list:
    return [(e["payload"]["label"], e["payload"]["status"]) for e in result["events"]]


def hooks_with(label: str, command: str = "true") -> Dict[str, Any]:
    return {"enabled": True, "before_tool": [{"label": label, "command": command}]}


def test_each_line_gets_its_result_at_once_and_a_bad_line_does_not_end_the_stream(
        project, streams):
    write_script(project, "no.sh", "#!/bin/sh\nexit 7\n")
    config = write_settings(project, {"enabled": True, "failure_policy": "block",
                                      "before_tool": [{"label": "gate", "command": "./no.sh",
                                                       "include_tools": ["write"]}]})
    stream = streams("--config", str(config), cwd=project)
    first = stream.send(bash_event(call_id="c1"))
    assert (first["verdict"], first["tool"], first["events"]) == (
        "continue", {"name": "bash", "call_id": "c1"}, [])
    assert stream.send(b"{not json") == {
        "error": "input is not valid JSON: Expecting property name enclosed in double quotes "
                 "at line 1, column 2"}
    blocked = stream.send({"tool": {"name": "write", "call_id": "c2"},
                           "request": {"path": "a.txt", "content": "x"}})
    assert blocked["verdict"] == "block"
    assert blocked["tool_result"]["blocked"] is True
    assert labels(blocked) == [("gate", "started"), ("gate", "failed"), ("gate", "failed")]
    message = stream.send({"text": "done"}, phase="after_assistant")
    assert (message["phase"], message["tool"]) == (
        "after_assistant", {"name": "assistant", "call_id": "assistant-turn-0"})
    done = stream.finish()
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_blank_lines_are_skipped_and_exit_is_0_at_end_of_input(project):
    lines = [b"", b"   ", json.dumps(dict(bash_event(call_id="a"), phase="before_tool")).encode(),
             b"\t\r", json.dumps(dict(bash_event(call_id="b"), phase="before_tool")).encode()]
    result = run_cli("run", "--stream", stdin=b"\n".join(lines), cwd=project)
    assert result.returncode == 0
    assert result.stderr == ""
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [answer["tool"]["call_id"] for answer in answers] == ["a", "b"]
    assert run_cli("run", "--stream", stdin=b"", cwd=project).stdout == ""


@pytest.mark.parametrize("line, error", [
    (json.dumps(bash_event()), "$.phase: missing (each --stream event names its phase: "
                               "before_tool, after_tool, after_assistant, after_reasoning)"),
    (json.dumps(dict(bash_event(), phase="during_tool")),
     "$.phase: expected one of before_tool, after_tool, after_assistant, after_reasoning"),
    (json.dumps(dict(bash_event(), phase=["before_tool"])),
     "$.phase: expected one of before_tool, after_tool, after_assistant, after_reasoning"),
    ("[1, 2]", "$: input must be a JSON object, got an array"),
    (json.dumps({"phase": "after_tool", "tool": {"name": "bash"}, "request": {}}),
     "$.result: missing (expected an object)"),
])
def test_a_bad_event_gives_one_error_line(project, line, error):
    good = json.dumps(dict(bash_event(call_id="after"), phase="before_tool"))
    result = run_cli("run", "--stream", stdin=(line + "\n" + good + "\n").encode(), cwd=project)
    first, second = result.stdout.splitlines()
    assert json.loads(first) == {"error": error}
    assert json.loads(second)["tool"]["call_id"] == "after"
    assert result.returncode == 0


def test_error_line_is_the_exit_2_message_without_its_prefix(project):
    event = {"tool": {"name": "bash"}, "request": {}, "context": {"cwd": 5}}
    single = run_cli("run", "--phase", "before_tool", event=event, cwd=project)
    streamed = run_cli("run", "--stream", stdin=json.dumps(dict(event, phase="before_tool"))
                       .encode(), cwd=project)
    assert single.returncode == 2
    assert single.stderr == "magihook: $.context.cwd: expected a string, got an integer\n"
    assert json.loads(streamed.stdout) == {"error": single.stderr[len("magihook: "):-1]}


def test_an_event_larger_than_the_cap_is_an_error_and_the_next_line_still_runs(project):
    huge = b'{"text": "' + b"x" * magihook.EVENT_MAX_BYTES + b'"}'
    good = json.dumps({"phase": "after_reasoning", "text": "ok"}).encode()
    result = run_cli("run", "--stream", stdin=huge + b"\n" + good + b"\n", cwd=project)
    first, second = result.stdout.splitlines()
    assert json.loads(first) == {
        "error": "input event is larger than %d bytes" % magihook.EVENT_MAX_BYTES}
    assert json.loads(second)["tool"]["name"] == "reasoning"


def test_settings_change_mid_stream_is_picked_up(project, streams):
    config = write_settings(project, hooks_with("one"))
    stream = streams("--config", str(config), cwd=project)
    assert labels(stream.send(bash_event())) == [("one", "started"), ("one", "success")]
    # An editor's save: a new file renamed over the old one.
    replacement = write_settings(project, hooks_with("two-renamed"), name="settings.new")
    os.replace(replacement, config)
    assert labels(stream.send(bash_event())) == [
        ("two-renamed", "started"), ("two-renamed", "success")]
    # A rewrite in place (same inode, another size).
    write_settings(project, hooks_with("three"))
    assert labels(stream.send(bash_event())) == [("three", "started"), ("three", "success")]
    write_settings(project, {"enabled": False, "before_tool": [{"command": "true"}]})
    assert stream.send(bash_event())["events"] == []


def test_settings_that_turn_invalid_give_an_error_per_event_until_fixed(project, streams):
    config = write_settings(project, hooks_with("ok"))
    stream = streams("--config", str(config), cwd=project)
    assert stream.send(bash_event())["verdict"] == "continue"
    write_settings(project, {"enabled": True, "timeout_seconds": 0})
    error = {"error": "%s: $.hooks.timeout_seconds: must be between 1 and 60 (got 0)" % config}
    assert stream.send(bash_event()) == error
    assert stream.send(bash_event()) == error
    config.unlink()
    assert stream.send(bash_event()) == {"error": "%s: settings file not found" % config}
    write_settings(project, hooks_with("fixed"))
    assert labels(stream.send(bash_event())) == [("fixed", "started"), ("fixed", "success")]


def test_a_settings_file_created_mid_stream_is_discovered(project, streams):
    stream = streams(cwd=project)
    assert stream.send(bash_event())["events"] == []
    folder = project / ".magi-code"
    folder.mkdir()
    write_settings(folder, hooks_with("found"))
    assert run_cli("trust", cwd=project).returncode == 0  # a project file needs trust
    assert labels(stream.send(bash_event())) == [("found", "started"), ("found", "success")]
    (folder / "settings.json").unlink()
    assert stream.send(bash_event())["events"] == []


def test_session_applies_to_every_event(project, tmp_path):
    config = write_settings(project, hooks_with("audit"))
    session = tmp_path / "sessions" / "s.jsonl"
    lines = b"".join(json.dumps(dict(bash_event(call_id=name), phase="before_tool")).encode()
                     + b"\n" for name in ("c1", "c2"))
    result = run_cli("run", "--stream", "--config", str(config), "--session", str(session),
                     stdin=lines, cwd=project)
    assert result.returncode == 0
    recorded = [json.loads(line)["payload"] for line in session.read_text().splitlines()]
    assert [(each["tool_call_id"], each["status"]) for each in recorded] == [
        ("c1", "started"), ("c1", "success"), ("c2", "started"), ("c2", "success")]
    printed = [event["payload"] for line in result.stdout.splitlines()
               for event in json.loads(line)["events"]]
    assert printed == recorded


def test_stream_stops_when_its_reader_goes_away(project):
    log = project / "log"
    write_script(project, "log.sh", "#!/bin/sh\ncat >/dev/null\necho x >> log\n")
    config = write_settings(project, hooks_with("log", "./log.sh"))
    reader, writer = os.pipe()
    event = json.dumps(dict(bash_event(), phase="before_tool")).encode() + b"\n"
    process = subprocess.Popen([*MAGIHOOK_ARGV, "run", "--stream", "--config",
                                str(config)], cwd=project, stdin=subprocess.PIPE,
                               stdout=writer, stderr=subprocess.PIPE)
    os.close(writer)
    try:
        process.stdin.write(event)
        process.stdin.flush()
        ready, _, _ = select.select([reader], [], [], ANSWER_SECONDS)
        assert ready
    finally:
        os.close(reader)
    process.stdin.write(event * 3)
    process.stdin.close()
    assert process.wait(timeout=ANSWER_SECONDS) == 0
    assert process.stderr.read() == b""
    # The second event ran before its answer found no reader; the last two never ran.
    assert log.read_text() == "x\nx\n"


@pytest.mark.parametrize("other", [["--phase", "before_tool"], ["--explain"]])
def test_stream_with_phase_or_explain_is_a_usage_error(project, other):
    result = run_cli("run", "--stream", *other, cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("magihook: --stream cannot be combined with %s (each line names its "
                             "phase) (see magihook --help)\n" % other[0])


def test_stream_lines_cuts_an_overlong_line_and_skips_its_rest(tmp_path):
    # stream_lines is the framing alone; a small limit is not configurable, so use a real file
    # holding a line one byte over the cap, then a short line.
    path = tmp_path / "lines"
    path.write_bytes(b"a" * (magihook.EVENT_MAX_BYTES + 1) + b"tail\nnext\nlast")
    with open(path, "rb") as handle:
        lines = list(magihook.stream_lines(handle))
    assert [len(line) for line in lines] == [magihook.EVENT_MAX_BYTES + 1, 4, 4]
    assert lines[1:] == [b"next", b"last"]


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_ends_the_stream_and_the_running_hooks_group(project, streams, signum, code):
    write_script(project, "slow.sh", "#!/bin/sh\nsleep 30 &\necho $! > sleep.pid\nwait\n")
    config = write_settings(project, hooks_with("slow", "./slow.sh"))
    stream = streams("--config", str(config), cwd=project)
    assert stream.send(json.dumps(dict(bash_event(), phase="after_assistant")).encode()) == {
        "error": "$.tool: unknown key for phase after_assistant"}
    stream.write(json.dumps(dict(bash_event(), phase="before_tool")).encode())
    pid_file = project / "sleep.pid"
    deadline = time.monotonic() + ANSWER_SECONDS
    while not (pid_file.exists() and pid_file.read_text().endswith("\n")):
        assert time.monotonic() < deadline, "the hook never started"
        time.sleep(0.01)
    os.kill(stream.process.pid, signum)
    done = stream.finish()
    assert (done.returncode, done.stdout) == (code, b"")
    assert done.stderr.decode() == "magihook: interrupted by %s; hook processes were ended\n" % (
        signal.Signals(signum).name)
    # The hook's background child was killed with its group (reaping it is init's business).
    sleeper = int(pid_file.read_text())
    if not dies(sleeper):
        os.kill(sleeper, signal.SIGKILL)  # leave nothing behind, then fail
        pytest.fail("the hook's grandchild outlived magihook")


def dies(pid: int) -> bool:
    """Whether the process is dead (gone, or a zombie) within the answer time."""
    deadline = time.monotonic() + ANSWER_SECONDS
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.01)
    return False
