"""Claude Code (pinned, from npm) calling `magihook adapt claude-code` end to end.

Each test writes a scratch project: magihook's settings in `.magi-code/settings.json`, and
`.claude/settings.json` exactly as `magihook adapt claude-code --print-settings --config ...`
prints it.  `claude -p` then runs against a mock of the Messages API that scripts one or two
tool calls, then a final answer, and records every request: what the model saw is read from
those requests, whether the tool ran from the files it would touch.  What the model sees is
checked as magihook's sentence inside the tool result, whatever prefix the release adds
(2.1.332 writes `PreToolUse:Bash hook error: ` before it, 2.1.197 nothing).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_mock import (
    FINAL_TEXT,
    ClaudeModel,
    print_settings,
    request_text,
    result_text,
    run_claude,
    text_after_tool_result,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "hooks"
BLOCKED = "This tool call was blocked by local hook policy."
SETTINGS_BROKEN = "This tool call was blocked because the local hook settings could not be loaded."
FAILING = "#!/bin/sh\ncat >/dev/null\necho 'hook-stderr-secret' >&2\nexit 1\n"
# A guard written once against magihook's tools: a secret-like path or a credential in what a
# write or an edit would put in a file (write's content, hash_edit's patch).
WRITE_GUARD = (Path(__file__).resolve().parent.parent / "interop_scripts" / "write_guard.sh").read_text()
# Records the after_tool envelope it gets (magihook's own dialect, payload full).
RECORDER = r"""#!/usr/bin/env bash
cat >> "$(dirname "$0")/after.jsonl"
printf '\n' >> "$(dirname "$0")/after.jsonl"
"""
LEAK_MARKERS = ("hook-stderr-secret", "unknown key", ".magi-code")
MEMORY_ITEM = "Relevant bounded memory for next provider call (after bash)."  # memory-after.sh's
# The newest release measured to go on after a deny that carries `continue: false`; later ones
# end the turn there (docs/interop.md).
LAST_RELEASE_GOING_ON_AFTER_A_STOPPING_DENY = (2, 1, 197)


@pytest.fixture
def claude(agent_cli):
    return agent_cli("claude-code")


@pytest.fixture
def stops_at_a_stopping_deny(agent_release):
    """Whether the driven release ends the turn on a deny with `continue: false`."""
    return agent_release("claude-code") > LAST_RELEASE_GOING_ON_AFTER_A_STOPPING_DENY


@pytest.fixture
def scratch(tmp_path):
    project = tmp_path / "project"
    (project / "hooks").mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".magi-code").mkdir()
    (tmp_path / "claude-home").mkdir()
    return project


def wire(project: Path, hooks: dict, raw: str = None) -> Path:
    """magihook's settings (or `raw` text), and Claude Code wired by --print-settings."""
    settings = project / ".magi-code" / "settings.json"
    settings.write_text(raw if raw is not None else json.dumps({"hooks": dict({"enabled": True},
                                                                                **hooks)}))
    snippet = print_settings(settings)
    (project / ".claude" / "settings.json").write_text(json.dumps(snippet, indent=2))
    return settings


def script(project: Path, name: str, body: str = None) -> str:
    path = project / "hooks" / name
    if body is None:
        shutil.copy2(EXAMPLES / name, path)
    else:
        path.write_text(body)
    path.chmod(0o755)
    return "./hooks/" + name


def go(claude, project, calls, resume=False):
    with ClaudeModel(calls) as model:
        run = run_claude(claude, project, project.parent / "claude-home", model,
                         prompt="go on" if resume else "go", resume=resume)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def seen(run):
    """(the tool results the model got, how many conversation requests it got)."""
    conversation = run.model.conversation()
    results = run.tool_results_seen()
    return [(result_text(block), block.get("is_error", False)) for block in results], len(conversation)


def assert_nothing_leaked(run, project):
    for request in run.model.requests:
        text = request_text(request.body)
        for marker in LEAK_MARKERS + (str(project / ".magi-code"),):
            assert marker not in text, marker


def assert_denied_with(result, sentence):
    """An error tool result carrying magihook's fixed sentence (and nothing of a hook's)."""
    text, is_error = result
    assert is_error and sentence in text, result


def assert_stopped_before_the_tool(claude, project, run, stops, sentence):
    """A deny with `continue: false`: the tool never ran; a release that honours the stop ends
    the turn before any tool result is sent, and the model reads the deny at the start of the
    next turn; an older one hands it the deny at once and the turn goes on.  Either way the
    model's only word about the call is magihook's sentence."""
    assert run.hook_answers("PreToolUse")[0]["continue"] is False
    assert run.hook_answers("PostToolUse") == []  # the tool never ran
    results, requests = seen(run)
    if stops:
        assert (requests, results) == (1, [])  # nothing went on to the model
        assert (run.final()["terminal_reason"], run.final()["result"]) == ("hook_stopped", "")
        run = go(claude, project, [], resume=True)
        results, requests = seen(run)
        assert requests == 1
    else:
        assert (requests, run.final()["result"]) == (2, FINAL_TEXT)
    assert len(results) == 1
    assert_denied_with(results[0], sentence)
    return run


def bash(command):
    return ("Bash", {"command": command, "description": "scripted"})


# --- before_tool verdicts -----------------------------------------------------------------------

def test_block_denies_and_the_model_sees_the_sanitized_deny(claude, scratch):
    (scratch / "sentinel").write_text("keep")
    wire(scratch, {"before_tool": [{"label": "gate", "command": script(scratch, "block-dangerous-bash.sh"),
                                    "payload": "full", "failure_policy": "block",
                                    "include_tools": ["bash"]}]})
    run = go(claude, scratch, [bash("rm -rf sentinel")])
    assert (scratch / "sentinel").exists()
    results, requests = seen(run)
    assert len(results) == 1
    assert_denied_with(results[0], BLOCKED)
    assert (requests, run.final()["result"]) == (2, FINAL_TEXT)  # the turn goes on
    assert "blocked dangerous command pattern" not in request_text(run.model.conversation()[-1].body)


def test_a_command_run_through_monitor_meets_the_bash_guard(claude, scratch, agent_release):
    # 2.1.332's Monitor runs a shell command (and streams its stdout lines to the model as
    # notifications): Claude Code hands its hook events over as Bash's, so a bash guard holds.
    if agent_release("claude-code") < (2, 1, 332):
        pytest.skip("no Monitor tool before 2.1.332")
    (scratch / "sentinel").write_text("keep")
    wire(scratch, {"before_tool": [{"label": "gate", "command": script(scratch, "block-dangerous-bash.sh"),
                                    "payload": "full", "failure_policy": "block",
                                    "include_tools": ["bash"]}]})
    run = go(claude, scratch, [("Monitor", {"command": "rm -rf sentinel", "description": "scripted"})])
    assert (scratch / "sentinel").exists()
    results, _ = seen(run)
    assert len(results) == 1
    assert_denied_with(results[0], BLOCKED)


def test_allow_the_real_output_reaches_the_model(claude, scratch):
    wire(scratch, {"before_tool": [{"label": "gate", "command": script(scratch, "block-dangerous-bash.sh"),
                                    "payload": "full", "failure_policy": "block",
                                    "include_tools": ["bash"]}]})
    run = go(claude, scratch, [bash("echo allowed-$((40 + 2)) > out.txt; cat out.txt")])
    assert (scratch / "out.txt").read_text() == "allowed-42\n"
    results, requests = seen(run)
    assert results == [("allowed-42", False)]
    assert requests == 2


def test_fail_before_the_tool_denies_it_and_stops_the_turn(claude, scratch, stops_at_a_stopping_deny):
    (scratch / "sentinel").write_text("keep")
    wire(scratch, {"before_tool": [{"label": "strict", "command": script(scratch, "fail.sh", FAILING),
                                    "failure_policy": "fail"}]})
    run = go(claude, scratch, [bash("rm -f sentinel")])
    assert (scratch / "sentinel").exists()
    assert_nothing_leaked(run, scratch)
    later = assert_stopped_before_the_tool(claude, scratch, run, stops_at_a_stopping_deny, BLOCKED)
    assert_nothing_leaked(later, scratch)
    assert (scratch / "sentinel").exists()


def test_timeout_under_block_denies(claude, scratch):
    (scratch / "sentinel").write_text("keep")
    slow = "#!/bin/sh\ncat >/dev/null\nexec sleep 30\n"
    wire(scratch, {"before_tool": [{"label": "slow", "command": script(scratch, "slow.sh", slow),
                                    "timeout_seconds": 1, "failure_policy": "block"}]})
    run = go(claude, scratch, [bash("rm -f sentinel")])
    assert (scratch / "sentinel").exists()
    results, requests = seen(run)
    assert (len(results), requests) == (1, 2)  # the turn goes on
    assert_denied_with(results[0], BLOCKED)


def test_warn_runs_the_tool_and_tells_only_the_user(claude, scratch):
    wire(scratch, {"before_tool": [{"label": "flaky-gate-7f3a", "command": script(scratch, "fail.sh", FAILING),
                                    "failure_policy": "warn"}]})
    run = go(claude, scratch, [bash("echo ran > ran.txt; echo ran")])
    assert (scratch / "ran.txt").exists()
    results, requests = seen(run)
    assert (results, requests) == ([("ran", False)], 2)
    warning = ("magihook: hook flaky-gate-7f3a (before_tool #0, bash) failed: exit: hook exited with "
               "status 1; the call went on without it (failure_policy warn)")
    assert run.hook_answers("PreToolUse") == [{"systemMessage": warning}]
    assert run.user_messages() == [warning]
    for request in run.model.requests:
        assert "flaky-gate-7f3a" not in request_text(request.body)
    assert_nothing_leaked(run, scratch)


def test_broken_settings_fail_closed_and_show_the_model_no_path(claude, scratch,
                                                               stops_at_a_stopping_deny):
    (scratch / "sentinel").write_text("keep")
    settings = wire(scratch, {}, raw='{"hooks": {"enabled": true, "timeout": 5}}')
    run = go(claude, scratch, [bash("rm -f sentinel")])
    assert (scratch / "sentinel").exists()
    assert_nothing_leaked(run, scratch)
    later = assert_stopped_before_the_tool(claude, scratch, run, stops_at_a_stopping_deny,
                                           SETTINGS_BROKEN)
    assert_nothing_leaked(later, scratch)
    # The details (the file, the key) are shown to the user only: at the PreToolUse, and again
    # at each Stop that finds the file still broken.
    assert set(run.user_messages()) == {
        "magihook: %s: $.hooks.timeout: unknown key 'timeout' (did you mean 'timeout_seconds'?)"
        % settings}


# --- write guards through Claude Code's file tools ---------------------------------------------

def test_write_guard_through_write_and_edit(claude, scratch):
    (scratch / "app.py").write_text("TOKEN = 'x'\n")
    guard = script(scratch, "write-guard.sh", WRITE_GUARD)
    wire(scratch, {"before_tool": [{"label": "writes", "command": guard, "payload": "full",
                                    "failure_policy": "block", "include_tools": ["write", "hash_edit"]}]})
    secret = "sk-" + "A" * 24
    run = go(claude, scratch, [
        ("Write", {"file_path": str(scratch / "server.key"), "content": "-----BEGIN KEY-----\n"}),
        ("Read", {"file_path": str(scratch / "app.py")}),
        ("Edit", {"file_path": str(scratch / "app.py"), "old_string": "'x'",
                  "new_string": "'%s'" % secret}),
        ("Write", {"file_path": str(scratch / "notes.txt"), "content": "fine\n"}),
    ])
    assert not (scratch / "server.key").exists()
    assert (scratch / "app.py").read_text() == "TOKEN = 'x'\n"
    assert (scratch / "notes.txt").read_text() == "fine\n"
    results, _ = seen(run)
    assert_denied_with(results[0], BLOCKED)
    assert_denied_with(results[2], BLOCKED)
    assert results[3][1] is False


def test_shipped_write_validator_through_write(claude, scratch):
    validator = script(scratch, "write-validator.sh")
    wire(scratch, {"before_tool": [{"label": "validator", "command": validator, "payload": "full",
                                    "failure_policy": "block", "include_tools": ["write"]}]})
    run = go(claude, scratch, [("Write", {"file_path": str(scratch / "server.key"), "content": "k\n"})])
    assert not (scratch / "server.key").exists()
    (result,) = seen(run)[0]
    assert_denied_with(result, BLOCKED)


# --- after_tool -------------------------------------------------------------------------------

def test_context_injection_reaches_the_next_request(claude, scratch):
    memory = script(scratch, "memory-after.sh")
    wire(scratch, {"provider_context_injection": True,
                   "after_tool": [{"label": "memory", "command": memory}]})
    run = go(claude, scratch, [bash("echo hi")])
    conversation = run.model.conversation()
    assert len(conversation) == 2
    # After the tool result (2.1.197: a system reminder in the same message; 2.1.332: a system
    # message of its own), never before it.
    assert seen(run)[0] == [("hi", False)]
    assert MEMORY_ITEM in text_after_tool_result(conversation[1].body)
    assert "Relevant bounded memory" not in request_text(conversation[0].body)


def test_fail_after_the_tool_stops_the_turn(claude, scratch):
    wire(scratch, {"after_tool": [{"label": "strict-after", "command": script(scratch, "fail.sh", FAILING),
                                   "failure_policy": "fail"}]})
    run = go(claude, scratch, [bash("echo ran > ran.txt")])
    assert (scratch / "ran.txt").exists()  # the tool ran before the after hook
    _, requests = seen(run)
    assert requests == 1  # nothing went on to the model
    assert (run.final()["terminal_reason"], run.final()["result"]) == ("hook_stopped", "")
    assert_nothing_leaked(run, scratch)


def wire_recorder_and_memory(project, phase):
    """In `phase`: a hook that records its envelope (payload full), then memory-after.sh."""
    wire(project, {"provider_context_injection": True, phase: [
        {"label": "audit", "command": script(project, "recorder.sh", RECORDER), "payload": "full"},
        {"label": "memory", "command": script(project, "memory-after.sh")}]})


def recorded(project):
    """The one envelope the recorder got."""
    (record,) = [json.loads(line) for line in (project / "hooks" / "after.jsonl").read_text().splitlines()
                 if line.strip()]
    return record


def test_failed_tool_reaches_after_hooks_with_success_false(claude, scratch):
    wire_recorder_and_memory(scratch, "after_tool")
    run = go(claude, scratch, [bash("echo failing-output; exit 3")])
    record = recorded(scratch)
    assert (record["tool"]["name"], record["result"]["success"]) == ("bash", False)
    assert record["result"]["content"] == "Exit code 3\nfailing-output"
    # PostToolUseFailure's additionalContext reaches the model, after the failed result.
    results, requests = seen(run)
    assert (len(results), requests) == (1, 2)
    assert "failing-output" in results[0][0] and results[0][1] is True
    assert MEMORY_ITEM in text_after_tool_result(run.model.conversation()[-1].body)



# --- import: a Claude Code hook keeps its meaning inside magihook --------------------------------

ENV_ONE_LINER = ("jq -r '.tool_input.file_path // empty' | { read -r f; case \"$f\" in *.env) "
                 "echo \"Blocked: $f\" >&2; exit 2;; esac; }")


def test_an_imported_one_liner_blocks_as_it_does_in_claude_code(claude, scratch):
    claude_hooks = {"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": ENV_ONE_LINER, "timeout": 10}]}]}}
    calls = [("Write", {"file_path": str(scratch / ".env"), "content": "KEY=1\n"}),
             ("Write", {"file_path": str(scratch / "notes.txt"), "content": "fine\n"})]
    # Natively, Claude Code blocks the .env write with the hook's stderr.
    (scratch / ".claude" / "settings.json").write_text(json.dumps(claude_hooks))
    native = go(claude, scratch, calls)
    assert not (scratch / ".env").exists() and (scratch / "notes.txt").exists()
    assert [error for _, error in seen(native)[0]] == [True, False]
    (scratch / "notes.txt").unlink()
    # Imported, it runs from a generated script, and blocks the same call.
    source = scratch.parent / "claude-hooks.json"
    source.write_text(json.dumps(claude_hooks))
    done = subprocess.run([sys.executable, str(ROOT / "magihook.py"), "import", "claude-code",
                           str(source)], cwd=str(scratch), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "so it runs from the generated script" in done.stderr
    wire(scratch, {}, raw=done.stdout)
    imported = go(claude, scratch, calls)
    assert not (scratch / ".env").exists() and (scratch / "notes.txt").exists()
    results = seen(imported)[0]
    assert_denied_with(results[0], BLOCKED)
    assert results[1][1] is False
    # The hook's stderr (what Claude Code natively hands the model) stays out.
    assert "Blocked: %s" % (scratch / ".env") in request_text(native.model.conversation()[-1].body)
    assert "Blocked: " not in request_text(imported.model.conversation()[-1].body)


# --- after_assistant: the final message, at Claude Code's Stop ---------------------------------

def test_after_assistant_hooks_run_on_the_final_message_and_start_no_round(claude, scratch):
    wire_recorder_and_memory(scratch, "after_assistant")
    run = go(claude, scratch, [bash("echo hi")])
    record = recorded(scratch)
    assert (record["phase"], record["tool"]["name"], record["request"]["text"]) == (
        "after_assistant", "assistant", FINAL_TEXT)
    # The memory hook's item has no next request to go to: no further model round, no loop.
    assert len(run.model.conversation()) == 2
    assert (run.final()["terminal_reason"], run.final()["result"]) == ("completed", FINAL_TEXT)
    for request in run.model.requests:
        assert "Relevant bounded memory" not in request_text(request.body)


def test_fail_in_an_after_assistant_hook_ends_the_turn(claude, scratch):
    wire(scratch, {"after_assistant": [{"label": "strict-final",
                                        "command": script(scratch, "fail.sh", FAILING),
                                        "failure_policy": "fail"}]})
    run = go(claude, scratch, [])
    assert len(run.model.conversation()) == 1  # no further model round
    # The stop is Claude Code's "a Stop hook ended the turn"; the final answer stands.
    assert (run.final()["terminal_reason"], run.final()["result"]) == ("stop_hook_prevented",
                                                                       FINAL_TEXT)
    assert_nothing_leaked(run, scratch)
