"""GitHub Copilot CLI (pinned @github/copilot, from npm) calling `magihook adapt copilot` end to end.

Each test writes a scratch project: magihook's settings outside it, and
`.github/hooks/magihook.json` exactly as `magihook adapt copilot --print-settings --config ...`
prints it.  `copilot -p` (offline, a BYOK Anthropic provider) then runs against a loopback
mock of the Messages API that scripts the tool calls, then a final answer, and records every
request: what the model saw is read from those requests, whether the tool ran from the files
it would touch.  Assertions are about behaviour (did it run, what text reached the model),
not Copilot's wording around magihook's sentence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_mock import FINAL_TEXT, ClaudeModel, request_text, result_text, tool_results
from copilot_mock import run_copilot
from loopback import LOOPBACK, inet_peers
from wiring import ROOT, print_settings, script, write_magihook_settings
from wiring import assert_nothing_leaked as assert_no_leak

BLOCKED = "This tool call was blocked by local hook policy."
STOPPED = "This turn was stopped by local hook policy."
SETTINGS_BROKEN = "This tool call was blocked because the local hook settings could not be loaded."
FAILING = "#!/bin/sh\ncat >/dev/null\necho 'hook-stderr-secret' >&2\nexit 1\n"
WRITE_GUARD = (ROOT / "tests" / "interop_scripts" / "write_guard.sh").read_text()
RECORDER = "#!/bin/sh\ncat >> \"$(dirname \"$0\")/after.jsonl\"\nprintf '\\n' >> \"$(dirname \"$0\")/after.jsonl\"\n"
SECRET = "sk-" + "e2eA1b2C3d4E5f6G7h8"


@pytest.fixture
def copilot(agent_cli):
    return agent_cli("copilot")


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    (folder / "hooks").mkdir(parents=True)
    (folder / ".github" / "hooks").mkdir(parents=True)
    (tmp_path / "copilot-home").mkdir()
    return folder


def wire(project: Path, hooks: dict, raw: str = None, session: Path = None) -> Path:
    """magihook's settings outside the project, and Copilot wired by --print-settings (with
    `--session PATH` added to each command when `session` is given)."""
    settings = write_magihook_settings(project, hooks, raw)
    snippet = print_settings("copilot", settings)
    if session is not None:
        for handlers in snippet["hooks"].values():
            for handler in handlers:
                handler["bash"] += " --session " + str(session)
    (project / ".github" / "hooks" / "magihook.json").write_text(json.dumps(snippet, indent=2))
    return settings



def go(copilot, project, calls, trace=None):
    with ClaudeModel(calls) as model:
        run = run_copilot(copilot, project, project.parent / "copilot-home", model, trace=trace)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def seen(run):
    """(the tool results the model got, how many conversation requests it made)."""
    conversation = run.model.conversation()
    results = tool_results(conversation[-1].body) if conversation else []
    return [result_text(block) for block in results], len(conversation)


def assert_nothing_leaked(run, project, *markers):
    assert_no_leak([request.body for request in run.model.requests], project, *markers)


def bash(command):
    return ("bash", {"command": command, "description": "scripted"})


GATE = {"label": "gate", "payload": "full", "failure_policy": "block", "include_tools": ["bash"]}


# --- before_tool -------------------------------------------------------------------------------

def test_block_denies_records_the_session_and_talks_only_to_loopback(copilot, project, tmp_path):
    (project / "build").mkdir()
    (project / "build" / "sentinel").write_text("keep")
    session = tmp_path / "session.jsonl"
    wire(project, {"before_tool": [dict(GATE, command=script(project, "block-dangerous-bash.sh"))]},
         session=session)
    trace = tmp_path / "connect.log"
    run = go(copilot, project, [bash("rm -rf build")], trace=trace)
    assert (project / "build" / "sentinel").exists()
    results, requests = seen(run)
    assert len(results) == 1 and results[0].endswith(BLOCKED)
    assert (requests, run.final_message()) == (2, FINAL_TEXT)  # the turn goes on
    assert_nothing_leaked(run, project, "blocked dangerous command pattern")
    records = [json.loads(line) for line in session.read_text().splitlines() if line.strip()]
    rows = [(record["payload"]["phase"], record["payload"]["label"], record["payload"]["target_tool"],
             record["payload"]["status"]) for record in records if record["type"] == "hook_lifecycle"]
    assert rows[0] == ("before_tool", "gate", "bash", "started")
    assert rows[-1][:3] == ("before_tool", "gate", "bash") and rows[-1][3] != "succeeded"
    assert "rm -rf" not in session.read_text()
    port = int(run.model.url.rsplit(":", 1)[1])
    peers = inet_peers(trace)
    assert peers and all(address in LOOPBACK and each == port for address, each in peers), peers


def test_allow_the_real_output_reaches_the_model(copilot, project):
    wire(project, {"before_tool": [dict(GATE, command=script(project, "block-dangerous-bash.sh"))]})
    run = go(copilot, project, [bash("echo allowed-$((40 + 2)) > out.txt; cat out.txt")])
    assert (project / "out.txt").read_text() == "allowed-42\n"
    results, requests = seen(run)
    assert "allowed-42" in results[0] and BLOCKED not in results[0]
    assert requests == 2


def test_fail_before_the_tool_denies_it(copilot, project):
    (project / "sentinel").write_text("keep")
    wire(project, {"before_tool": [{"label": "strict-7f3a", "command": script(project, "fail.sh", FAILING),
                                    "failure_policy": "fail"}]})
    run = go(copilot, project, [bash("rm -f sentinel")])
    assert (project / "sentinel").exists()
    results, requests = seen(run)
    assert len(results) == 1 and results[0].endswith(BLOCKED)
    # Copilot cannot end the turn from a tool hook: the model answers.
    assert (requests, run.final_message()) == (2, FINAL_TEXT)
    assert_nothing_leaked(run, project, "strict-7f3a")


def test_timeout_under_block_denies(copilot, project):
    (project / "sentinel").write_text("keep")
    slow = "#!/bin/sh\ncat >/dev/null\nexec sleep 30\n"
    wire(project, {"before_tool": [{"label": "slow", "command": script(project, "slow.sh", slow),
                                    "timeout_seconds": 1, "failure_policy": "block"}]})
    run = go(copilot, project, [bash("rm -f sentinel")])
    assert (project / "sentinel").exists()
    results, _ = seen(run)
    assert len(results) == 1 and results[0].endswith(BLOCKED)


def test_broken_settings_fail_closed_and_show_the_model_no_path(copilot, project):
    (project / "sentinel").write_text("keep")
    wire(project, {}, raw='{"hooks": {"enabled": true, "timeout": 5}}')
    run = go(copilot, project, [bash("rm -f sentinel")])
    assert (project / "sentinel").exists()
    results, requests = seen(run)
    assert len(results) == 1 and results[0].endswith(SETTINGS_BROKEN)
    assert requests == 2
    assert_nothing_leaked(run, project)


# --- write guards through Copilot's file tools --------------------------------------------------

def test_write_guard_through_create_and_edit(copilot, project):
    (project / "app.py").write_text("TOKEN = 'x'\n")
    guard = script(project, "write-guard.sh", WRITE_GUARD)
    wire(project, {"before_tool": [{"label": "writes", "command": guard, "payload": "full",
                                    "failure_policy": "block", "include_tools": ["write", "hash_edit"]}]})
    run = go(copilot, project, [
        ("create", {"path": str(project / "server.key"), "file_text": "-----BEGIN KEY-----\n"}),
        ("view", {"path": str(project / "app.py")}),
        ("edit", {"path": str(project / "app.py"), "old_str": "'x'", "new_str": "'%s'" % SECRET}),
        ("create", {"path": str(project / "notes.txt"), "file_text": "fine\n"}),
    ])
    assert not (project / "server.key").exists()
    assert (project / "app.py").read_text() == "TOKEN = 'x'\n"
    assert (project / "notes.txt").read_text() == "fine\n"
    results, _ = seen(run)
    assert results[0].endswith(BLOCKED) and results[2].endswith(BLOCKED)
    assert BLOCKED not in results[1] + results[3]


# --- after_tool -------------------------------------------------------------------------------

def test_context_injection_reaches_the_next_request(copilot, project):
    wire(project, {"provider_context_injection": True,
                   "after_tool": [{"label": "memory", "command": script(project, "memory-after.sh")}]})
    run = go(copilot, project, [bash("echo hi")])
    conversation = run.model.conversation()
    assert len(conversation) == 2
    (result,) = seen(run)[0]
    # Copilot appends it to the tool result the model reads.
    assert result.startswith("hi\n")
    assert result.endswith("\nRelevant bounded memory for next provider call (after bash).")
    assert "Relevant bounded memory" not in request_text(conversation[0].body)


def test_fail_after_the_tool_withholds_its_output(copilot, project):
    wire(project, {"after_tool": [{"label": "strict-after", "command": script(project, "fail.sh", FAILING),
                                   "failure_policy": "fail"}]})
    run = go(copilot, project, [bash("echo ran > ran.txt; echo output-$((40 + 2))")])
    assert (project / "ran.txt").exists()  # the tool ran before the after hook
    results, requests = seen(run)
    assert results == [STOPPED]  # Copilot cannot stop the turn; the output never reaches the model
    assert requests == 2
    assert_nothing_leaked(run, project, "output-42")


def test_failed_command_reaches_after_hooks_with_success_false(copilot, project):
    recorder = script(project, "recorder.sh", RECORDER)
    wire(project, {"after_tool": [{"label": "audit", "command": recorder, "payload": "full"}]})
    go(copilot, project, [bash("echo failing-output; exit 3")])
    (record,) = [json.loads(line) for line in (project / "hooks" / "after.jsonl").read_text().splitlines()
                 if line.strip()]
    assert (record["tool"]["name"], record["result"]["success"]) == ("bash", False)
    assert record["result"]["content"].startswith("failing-output\n")
