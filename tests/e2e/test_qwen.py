"""Qwen Code (pinned @qwen-code/qwen-code, from npm) calling `magihook adapt qwen` end to end.

Each test writes a scratch project: magihook's settings outside it, and `.qwen/settings.json`
exactly as `magihook adapt qwen --print-settings --config ...` prints it.  `qwen` (one-shot,
yolo approval) runs against a loopback mock of the Chat Completions API that scripts the tool
calls, then a final answer, and records every request.  Qwen starts slowly, so one run often
proves several rows (a blocked and an allowed call in the same turn).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_mock import FINAL_TEXT, ChatModel
from loopback import LOOPBACK, inet_peers
from qwen_mock import run_qwen
from wiring import ROOT, print_settings, script, write_magihook_settings
from wiring import assert_nothing_leaked as assert_no_leak

BLOCKED = "This tool call was blocked by local hook policy."
STOPPED = "This turn was stopped by local hook policy."
SETTINGS_BROKEN = "This tool call was blocked because the local hook settings could not be loaded."
FAILING = "#!/bin/sh\ncat >/dev/null\necho 'hook-stderr-secret' >&2\nexit 1\n"
WRITE_GUARD = (ROOT / "tests" / "interop_scripts" / "write_guard.sh").read_text()
SECRET = "sk-" + "e2eA1b2C3d4E5f6G7h8"
GATE = {"label": "gate", "payload": "full", "failure_policy": "block", "include_tools": ["bash"]}


@pytest.fixture
def qwen(agent_cli):
    return agent_cli("qwen")


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    (folder / "hooks").mkdir(parents=True)
    (folder / ".qwen").mkdir()
    return folder


def wire(project: Path, hooks: dict, raw: str = None, session: Path = None) -> Path:
    """magihook's settings outside the project, and Qwen wired by --print-settings (with
    `--session PATH` added to each command when `session` is given)."""
    settings = write_magihook_settings(project, hooks, raw)
    snippet = print_settings("qwen", settings)
    if session is not None:
        for groups in snippet["hooks"].values():
            for group in groups:
                for handler in group["hooks"]:
                    handler["command"] += " --session " + str(session)
    (project / ".qwen" / "settings.json").write_text(json.dumps(snippet, indent=2))
    return settings



def go(qwen, project, calls, trace=None):
    with ChatModel(calls) as model:
        run = run_qwen(qwen, project, project.parent / "qwen-home", model, trace=trace)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def assert_finished(run, requests):
    """The turn went on to the model's final answer after `requests` conversation requests."""
    assert (run.final()["result"], len(run.model.conversation())) == (FINAL_TEXT, requests)


def assert_nothing_leaked(run, project, *markers):
    assert_no_leak([request.body for request in run.model.requests], project, *markers)


def shell(command):
    return ("run_shell_command", {"command": command})


def test_block_and_allow_in_one_turn_with_session_records_and_only_loopback(qwen, project, tmp_path):
    (project / "build").mkdir()
    (project / "build" / "sentinel").write_text("keep")
    session = tmp_path / "session.jsonl"
    wire(project, {"before_tool": [dict(GATE, command=script(project, "block-dangerous-bash.sh"))]},
         session=session)
    trace = tmp_path / "connect.log"
    run = go(qwen, project, [shell("rm -rf build"), shell("echo allowed-$((40 + 2)) > out.txt; cat out.txt")],
             trace=trace)
    assert (project / "build" / "sentinel").exists()
    assert (project / "out.txt").read_text() == "allowed-42\n"
    blocked, allowed = run.tool_texts()
    assert blocked == BLOCKED  # Qwen hands the model the deny reason alone
    assert "allowed-42" in allowed and BLOCKED not in allowed
    assert_finished(run, 3)
    assert_nothing_leaked(run, project, "blocked dangerous command pattern")
    records = [json.loads(line) for line in session.read_text().splitlines() if line.strip()]
    rows = [(record["payload"]["phase"], record["payload"]["label"], record["payload"]["status"])
            for record in records if record["type"] == "hook_lifecycle"]
    assert rows[0] == ("before_tool", "gate", "started") and len(rows) >= 4
    assert "rm -rf" not in session.read_text()
    port = int(run.model.url.rsplit(":", 1)[1])
    peers = inet_peers(trace)
    assert peers and all(address in LOOPBACK and each == port for address, each in peers), peers


def test_fail_before_a_tool_and_a_timed_out_guard_under_block_both_deny(qwen, project):
    (project / "sentinel").write_text("keep")
    slow = "#!/bin/sh\ncat >/dev/null\nexec sleep 30\n"
    wire(project, {"before_tool": [
        {"label": "strict-7f3a", "command": script(project, "fail.sh", FAILING),
         "failure_policy": "fail", "include_tools": ["write"]},
        {"label": "slow", "command": script(project, "slow.sh", slow), "timeout_seconds": 1,
         "failure_policy": "block", "include_tools": ["bash"]}]})
    run = go(qwen, project, [("write_file", {"file_path": str(project / "new.txt"), "content": "x\n"}),
                             shell("rm -f sentinel")])
    assert not (project / "new.txt").exists() and (project / "sentinel").exists()
    # The deny's reason, not continue:false's stopReason; Qwen cannot end the turn from a tool hook.
    assert run.tool_texts() == [BLOCKED, BLOCKED]
    assert_finished(run, 3)
    assert_nothing_leaked(run, project, "strict-7f3a")


def test_broken_settings_fail_closed_and_show_the_model_no_path(qwen, project):
    (project / "sentinel").write_text("keep")
    wire(project, {}, raw='{"hooks": {"enabled": true, "timeout": 5}}')
    run = go(qwen, project, [shell("rm -f sentinel")])
    assert (project / "sentinel").exists()
    assert run.tool_texts() == [SETTINGS_BROKEN]
    assert_finished(run, 2)
    assert_nothing_leaked(run, project)


def test_write_guard_through_write_file_and_edit(qwen, project):
    (project / "app.py").write_text("TOKEN = 'x'\n")
    guard = script(project, "write-guard.sh", WRITE_GUARD)
    wire(project, {"before_tool": [{"label": "writes", "command": guard, "payload": "full",
                                    "failure_policy": "block", "include_tools": ["write", "hash_edit"]}]})
    run = go(qwen, project, [
        ("write_file", {"file_path": str(project / "server.key"), "content": "-----BEGIN KEY-----\n"}),
        ("read_file", {"file_path": str(project / "app.py")}),
        ("edit", {"file_path": str(project / "app.py"), "old_string": "'x'",
                  "new_string": "'%s'" % SECRET}),
        ("write_file", {"file_path": str(project / "notes.txt"), "content": "fine\n"}),
    ])
    assert not (project / "server.key").exists()
    assert (project / "app.py").read_text() == "TOKEN = 'x'\n"
    assert (project / "notes.txt").read_text() == "fine\n"
    results = run.tool_texts()
    assert [results[0], results[2]] == [BLOCKED, BLOCKED]
    assert BLOCKED not in results[1] + results[3]


def test_context_injection_and_a_failed_command(qwen, project):
    recorder = script(project, "recorder.sh", "#!/bin/sh\ncat >> \"$(dirname \"$0\")/after.jsonl\"\n"
                                              "printf '\\n' >> \"$(dirname \"$0\")/after.jsonl\"\n")
    wire(project, {"provider_context_injection": True,
                   "after_tool": [{"label": "audit", "command": recorder, "payload": "full"},
                                  {"label": "memory", "command": script(project, "memory-after.sh")}]})
    run = go(qwen, project, [shell("echo hi"), shell("echo failing-output; exit 3")])
    conversation = run.model.conversation()
    first, failed = run.tool_texts()
    # Qwen appends additionalContext to the tool result, after a blank line.
    memory = "\n\nRelevant bounded memory for next provider call (after bash)."
    assert first.endswith(memory) and "Output: hi" in first
    assert failed.endswith(memory) and "failing-output" in failed
    assert "Relevant bounded memory" not in json.dumps(conversation[0].body)
    records = [json.loads(line) for line in (project / "hooks" / "after.jsonl").read_text().splitlines()
               if line.strip()]
    assert [(record["tool"]["name"], record["result"]["success"]) for record in records] == [
        ("bash", True), ("bash", False)]


def test_fail_after_the_tool_withholds_its_output(qwen, project):
    wire(project, {"after_tool": [{"label": "strict-after", "command": script(project, "fail.sh", FAILING),
                                   "failure_policy": "fail"}]})
    run = go(qwen, project, [shell("echo ran > ran.txt; echo output-$((40 + 2))")])
    assert (project / "ran.txt").exists()  # the tool ran before the after hook
    assert run.tool_texts() == [STOPPED]  # stopReason replaces the output; the turn goes on
    assert_finished(run, 2)
    assert_nothing_leaked(run, project, "output-42")


def test_stop_runs_the_after_assistant_hooks_on_the_final_message_and_starts_no_loop(qwen, project):
    recorder = script(project, "recorder.sh", "#!/bin/sh\ncat > \"$(dirname \"$0\")/final.json\"\n")
    wire(project, {"provider_context_injection": True, "after_assistant": [
        {"label": "audit", "command": recorder, "payload": "full"},
        {"label": "memory", "command": script(project, "memory-after.sh")}]})
    run = go(qwen, project, [])
    record = json.loads((project / "hooks" / "final.json").read_text())
    assert (record["phase"], record["payload"]["data"]["request"]["text"]) == (
        "after_assistant", FINAL_TEXT)
    # A context item at a stop is not delivered: Qwen would run another model round for it.
    assert_finished(run, 1)
    assert "Relevant bounded memory" not in json.dumps([r.body for r in run.model.requests])
