"""Gemini CLI (pinned, from npm) calling `magihook adapt gemini` end to end.

Each test lets the mock model ask for one tool call, with magihook wired into the project's
`.gemini/settings.json` exactly as `magihook adapt gemini --print-settings` prints it, and checks
what the real agent did: whether the tool ran (a sentinel file), whether the turn went on (a
request after the tool), and what the model was shown (the recorded requests): magihook's sentence
inside the tool's outcome and on a line of what the user is shown, whatever words Gemini puts
around it.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys

import pytest
from gemini_mock import FINAL_ANSWER, ROOT, GeminiModel, GeminiRun, function_responses

BLOCKED = "This tool call was blocked by local hook policy."
HOOK_SECRET = "hook-private-text-7f3a"  # what hooks print: it must never reach the model
STOPPED = "This turn was stopped by local hook policy."


@pytest.fixture
def gemini(agent_cli, tmp_path):
    run = GeminiRun(agent_cli("gemini"), tmp_path)
    for name in ("write-validator.sh", "block-dangerous-bash.sh", "memory-after.sh"):
        shutil.copy(str(ROOT / "examples" / "hooks" / name), str(run.project / "hooks" / name))
    (run.project / "sentinel.txt").write_text("keep me\n")
    return run


def settings(**phases):
    return {"hooks": dict({"enabled": True}, **phases)}


def failing_hook(run, policy, name="fail.sh", sleep=False):
    body = "#!/bin/bash\ncat > /dev/null\necho %s >&2\n%s\n" % (
        HOOK_SECRET, "exec sleep 30" if sleep else "exit 1")
    return {"label": "failing", "command": run.hook_script(name, body), "failure_policy": policy,
            "timeout_seconds": 1}


def capture_hook(run):
    """A hook that records the envelope it got and prints nothing."""
    return {"label": "capture", "payload": "full", "failure_policy": "ignore",
            "command": run.hook_script("capture.sh", "#!/bin/bash\ncat >> hooks/captured.jsonl\n"
                                       "echo >> hooks/captured.jsonl\n")}


def captured(run):
    path = run.project / "hooks" / "captured.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tool_output(model):
    """What the model was shown as the tool's outcome (Gemini's functionResponse output)."""
    request = model.after_tool()
    assert request is not None, "no request carried the tool's outcome to the model"
    (response,) = function_responses(request)
    return response["response"].get("output", response["response"].get("error"))


def shown_to_user(outcome, sentence):
    """Whether a line Gemini printed for the user (stderr in headless mode) carries `sentence`."""
    return any(sentence in line for line in outcome.stderr.splitlines())


def assert_nothing_private(run, model):
    """No hook output anywhere sent to the model, and no local path or magihook message in what
    followed the tool call (the prompt's own workspace listing names the project's files)."""
    for request in model.requests:
        assert HOOK_SECRET not in request.raw.decode("utf-8", "replace")
        shown = json.dumps(since_tool_call(request))
        assert str(run.project) not in shown and "magihook" not in shown


def since_tool_call(request):
    """The request's contents after the model's function call (its arguments name paths)."""
    contents = request.body.get("contents") or []
    calls = [index for index, content in enumerate(contents)
             if any("functionCall" in part for part in content.get("parts") or [])]
    return contents[calls[0] + 1:] if calls else []


def shell(command):
    return GeminiModel("run_shell_command", {"command": command, "description": "e2e"})


def go(run, model, document):
    run.magihook_settings(document)
    run.wire()
    with model:
        outcome = run.run(model)
    return outcome


def test_print_settings_is_what_gemini_runs(gemini):
    gemini.magihook_settings(settings())
    snippet = gemini.wire()
    assert set(snippet["hooks"]) == {"BeforeTool", "AfterTool", "AfterAgent"}
    assert snippet["hooksConfig"] == {"enabled": True}
    command = snippet["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    # This interpreter importing magihook.py from its folder (cached bytecode; tests/test_cli.py).
    start = "import sys; sys.path.insert(0, %s); from magihook import console_main; console_main()"
    assert command == "%s -I -c %s adapt gemini --config %s" % (
        shlex.quote(sys.executable), shlex.quote(start % json.dumps(str(ROOT))),
        shlex.quote(str(gemini.settings_file)))


def test_block_keeps_the_sentinel_and_the_model_sees_the_sanitized_deny(gemini):
    guard = {"label": "guard", "command": "./hooks/block-dangerous-bash.sh", "payload": "full",
             "failure_policy": "block", "include_tools": ["bash"]}
    model = shell("rm -rf sentinel.txt")
    outcome = go(gemini, model, settings(before_tool=[guard]))
    assert outcome.returncode == 0, outcome
    assert (gemini.project / "sentinel.txt").exists()
    assert BLOCKED in tool_output(model)
    assert outcome.json["response"] == FINAL_ANSWER  # the turn goes on: the model answers
    assert shown_to_user(outcome, BLOCKED)  # what the user is shown
    assert_nothing_private(gemini, model)


def test_allow_runs_the_tool_and_its_output_reaches_the_model(gemini):
    guard = {"label": "guard", "command": "./hooks/block-dangerous-bash.sh", "payload": "full",
             "failure_policy": "block", "include_tools": ["bash"]}
    model = shell("rm sentinel.txt; echo e2e-allowed-output")
    outcome = go(gemini, model, settings(before_tool=[guard]))
    assert outcome.returncode == 0, outcome
    assert not (gemini.project / "sentinel.txt").exists()
    assert "e2e-allowed-output" in tool_output(model)
    assert outcome.json["response"] == FINAL_ANSWER


def test_context_items_reach_the_next_model_request(gemini):
    memory = gemini.project / ".magi-hooks" / "memory.txt"
    memory.parent.mkdir()
    memory.write_text("e2e-context-item: the build uses make\n")
    hook = {"label": "memory", "command": "./hooks/memory-after.sh",
            "provider_context_injection": True}
    model = shell("echo ran")
    outcome = go(gemini, model, settings(after_tool=[hook]))
    assert outcome.returncode == 0, outcome
    output = tool_output(model)
    item = "e2e-context-item: the build uses make"
    assert item in output and output.index("ran") < output.index(item)  # after the real output


WRITE_GUARD = {"label": "write-guard", "command": "./hooks/write-validator.sh", "payload": "full",
               "failure_policy": "block", "include_tools": ["write", "hash_edit"]}


@pytest.mark.parametrize("tool,args", [
    ("write_file", lambda p: {"file_path": str(p / "server.key"), "content": "PRIVATE KEY\n"}),
    ("replace", lambda p: {"file_path": str(p / "server.key"), "instruction": "rotate",
                           "old_string": "old key", "new_string": "PRIVATE KEY",
                           "allow_multiple": False}),
])
def test_write_guard_stops_gemini_file_tools_on_a_secret_like_path(gemini, tool, args):
    key = gemini.project / "server.key"
    if tool == "replace":
        key.write_text("old key\n")
    model = GeminiModel(tool, args(gemini.project))
    outcome = go(gemini, model, settings(before_tool=[WRITE_GUARD]))
    assert outcome.returncode == 0, outcome
    assert key.read_text() == "old key\n" if tool == "replace" else not key.exists()
    assert BLOCKED in tool_output(model)
    assert_nothing_private(gemini, model)


def test_write_guard_lets_an_ordinary_write_through(gemini):
    model = GeminiModel("write_file", {"file_path": str(gemini.project / "notes.txt"),
                                       "content": "hello\n"})
    outcome = go(gemini, model, settings(before_tool=[WRITE_GUARD]))
    assert outcome.returncode == 0, outcome
    assert (gemini.project / "notes.txt").read_text() == "hello\n"


def test_fail_before_the_tool_keeps_the_sentinel_and_stops_the_turn(gemini):
    model = shell("rm sentinel.txt")
    outcome = go(gemini, model, settings(before_tool=[failing_hook(gemini, "fail")]))
    assert (gemini.project / "sentinel.txt").exists()
    assert model.after_tool() is None, "the turn went on to the model"
    assert len(model.turn_requests()) == 1
    # Gemini ends the turn with exit status 0, an empty answer and the stop reason on stderr
    assert (outcome.returncode, outcome.json["response"]) == (0, ""), outcome
    assert shown_to_user(outcome, STOPPED)
    assert HOOK_SECRET not in outcome.stdout + outcome.stderr


def test_fail_after_the_tool_stops_the_turn(gemini):
    model = shell("rm sentinel.txt")
    outcome = go(gemini, model, settings(after_tool=[failing_hook(gemini, "fail")]))
    assert not (gemini.project / "sentinel.txt").exists()  # it ran: after_tool cannot undo it
    assert model.after_tool() is None, "the turn went on to the model"
    assert len(model.turn_requests()) == 1
    assert (outcome.returncode, outcome.json["response"]) == (0, ""), outcome
    assert shown_to_user(outcome, STOPPED)
    assert HOOK_SECRET not in outcome.stdout + outcome.stderr


def test_broken_settings_fail_closed_without_showing_a_path(gemini):
    model = shell("rm sentinel.txt")
    broken = '{"hooks": {"enabled": true, "before_tool": [{"command": "./x.sh", "timeout": 3}]}}'
    outcome = go(gemini, model, broken)
    assert outcome.returncode == 0, outcome
    assert (gemini.project / "sentinel.txt").exists()
    assert model.after_tool() is None, "the turn went on to the model"
    assert shown_to_user(outcome, STOPPED)
    # the details are the user's, in Gemini's user-visible message
    assert shown_to_user(outcome, "magihook: %s: $.hooks.before_tool[0].timeout: unknown key "
                         "'timeout' (did you mean 'timeout_seconds'?)" % gemini.settings_file)
    assert_nothing_private(gemini, model)


def test_a_guard_that_times_out_under_block_denies(gemini):
    model = shell("rm sentinel.txt")
    outcome = go(gemini, model, settings(before_tool=[failing_hook(gemini, "block", sleep=True)]))
    assert outcome.returncode == 0, outcome
    assert (gemini.project / "sentinel.txt").exists()
    assert BLOCKED in tool_output(model)
    assert outcome.json["response"] == FINAL_ANSWER
    assert shown_to_user(outcome, BLOCKED)
    assert_nothing_private(gemini, model)


def test_a_warning_reaches_the_user_not_the_model(gemini):
    model = shell("rm sentinel.txt; echo ran")
    outcome = go(gemini, model, settings(before_tool=[failing_hook(gemini, "warn")],
                                         after_tool=[failing_hook(gemini, "warn")]))
    assert outcome.returncode == 0, outcome
    assert not (gemini.project / "sentinel.txt").exists()
    assert "ran" in tool_output(model)
    for phase in ("before_tool", "after_tool"):
        assert shown_to_user(outcome, "magihook: hook failing (%s #0, bash) failed: exit: hook "
                                      "exited with status 1" % phase)
    for request in model.requests:
        assert "hook failing" not in request.raw.decode("utf-8", "replace")
    assert_nothing_private(gemini, model)


def test_after_hooks_see_a_failed_command_as_failed_and_plain(gemini):
    model = shell("echo e2e-out; exit 3")
    outcome = go(gemini, model, settings(after_tool=[capture_hook(gemini)]))
    assert outcome.returncode == 0, outcome
    (envelope,) = captured(gemini)
    assert envelope["result"]["success"] is False
    assert "e2e-out" in envelope["result"]["content"]  # the output, in Gemini's own words


def test_gemini_061_fields_reach_hooks_in_magihooks_words(gemini):
    """One turn, three tools called with Gemini 0.61's field names."""
    lines = gemini.project / "lines.txt"
    lines.write_text("".join("line %d\n" % n for n in range(1, 11)))
    model = GeminiModel(
        "read_file", {"file_path": str(lines), "start_line": 3, "end_line": 5},
        ("grep_search", {"pattern": "line 7", "dir_path": str(gemini.project),
                         "include_pattern": "*.txt"}),
        ("replace", {"file_path": str(lines), "instruction": "renumber", "old_string": "line",
                     "new_string": "row", "allow_multiple": True}))
    outcome = go(gemini, model, settings(before_tool=[capture_hook(gemini)]))
    assert outcome.returncode == 0, outcome
    assert [(envelope["tool"]["name"], envelope["request"]) for envelope in captured(gemini)] == [
        ("read", {"path": "lines.txt", "offset": 3, "limit": 3}),
        ("ffgrep", {"pattern": "line 7", "path": ".", "glob": "*.txt"}),
        ("hash_edit", {"path": "lines.txt", "replace_all": True,
                       "input": "*** Begin Patch\n*** Update File: lines.txt\n@@\n-line\n+row\n"
                                "*** End Patch"})]
    # The replace ran as Gemini runs it: every occurrence replaced.
    assert lines.read_text().count("row ") == 10


@pytest.mark.parametrize("hooks_config", [{"enabled": False},
                                          {"enabled": True, "disabled": ["magihook"]}])
def test_hooks_config_disabled_runs_no_hook(gemini, hooks_config):
    """Gemini's own switches: `hooksConfig.enabled: false`, or the hook's name in
    `hooksConfig.disabled`, run no hook, so magihook cannot guard anything; the guard here would
    have blocked the call."""
    model = shell("rm sentinel.txt")
    gemini.magihook_settings(settings(before_tool=[failing_hook(gemini, "block")]))
    printed = gemini.wire()
    project = gemini.project / ".gemini" / "settings.json"
    project.write_text(json.dumps(dict(printed, hooksConfig=hooks_config)))
    with model:
        outcome = gemini.run(model)
    assert outcome.returncode == 0, outcome
    assert not (gemini.project / "sentinel.txt").exists()


def test_an_untrusted_folder_exits_55_and_runs_nothing(gemini):
    model = shell("rm sentinel.txt")
    gemini.magihook_settings(settings(before_tool=[failing_hook(gemini, "block")]))
    gemini.wire()
    with model:
        outcome = gemini.run(model, trusted=False)
    assert outcome.returncode == 55, outcome
    assert (gemini.project / "sentinel.txt").exists()
    assert model.turn_requests() == []


def test_the_printed_hooks_config_wins_over_a_user_who_disabled_hooks(gemini):
    """Project settings override user settings in Gemini: the printed `hooksConfig.enabled`
    turns hooks on in this project even where the user's settings turned them off."""
    user = gemini.home / ".gemini" / "settings.json"
    user.write_text(json.dumps(dict(json.loads(user.read_text()), hooksConfig={"enabled": False})))
    model = shell("rm sentinel.txt")
    outcome = go(gemini, model, settings(before_tool=[failing_hook(gemini, "block")]))
    assert outcome.returncode == 0, outcome
    assert (gemini.project / "sentinel.txt").exists()


def test_a_folder_trusted_in_trusted_folders_json_runs_the_hooks(gemini):
    """The user's trust step without the variable: the folder listed in
    ~/.gemini/trustedFolders.json (what Gemini's trust dialog writes) loads the hooks."""
    (gemini.home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(gemini.project): "TRUST_FOLDER"}))
    model = shell("rm sentinel.txt")
    gemini.magihook_settings(settings(before_tool=[failing_hook(gemini, "block")]))
    gemini.wire()
    with model:
        outcome = gemini.run(model, trusted=False)
    assert outcome.returncode == 0, outcome
    assert (gemini.project / "sentinel.txt").exists()
    assert BLOCKED in tool_output(model)


# --- after_assistant: the final message, at Gemini's AfterAgent --------------------------------

def test_after_assistant_hooks_run_on_the_final_message_and_start_no_round(gemini):
    memory = gemini.project / ".magi-hooks" / "memory.txt"
    memory.parent.mkdir()
    memory.write_text("e2e-context-item: the build uses make\n")
    model = shell("echo ran")
    outcome = go(gemini, model, settings(after_assistant=[
        capture_hook(gemini), {"label": "memory", "command": "./hooks/memory-after.sh",
                               "provider_context_injection": True}]))
    assert outcome.returncode == 0, outcome
    (envelope,) = captured(gemini)
    assert (envelope["phase"], envelope["tool"]["name"], envelope["request"]["text"]) == (
        "after_assistant", "assistant", FINAL_ANSWER)
    # The memory hook's item has no next request to go to: no further model round, no loop.
    assert len(model.turn_requests()) == 2
    assert outcome.json["response"] == FINAL_ANSWER
    for request in model.requests:
        assert "e2e-context-item" not in request.raw.decode("utf-8", "replace")


def test_fail_in_an_after_assistant_hook_ends_the_turn(gemini):
    model = GeminiModel(None, {})
    outcome = go(gemini, model, settings(after_assistant=[failing_hook(gemini, "fail")]))
    assert outcome.returncode == 0, outcome
    assert len(model.turn_requests()) == 1  # no further model round
    # Gemini ends the agent there and says so; the final answer stands.
    assert outcome.json["response"] == FINAL_ANSWER
    assert any(STOPPED in warning for warning in outcome.json.get("warnings", [])), outcome
    assert HOOK_SECRET not in outcome.stdout + outcome.stderr
    assert_nothing_private(gemini, model)
