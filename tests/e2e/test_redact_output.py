"""hooks.redact_tool_output end to end with the real agents (pinned, from npm): a project file
holding a credential, shown by the agent's shell tool (`cat`) and read by its read tool, reaches
no request to the model while the file's other lines do (Claude Code, Gemini CLI, Copilot CLI,
Qwen Code; Codex has no read tool: its shell `cat`); in Claude Code a Write of the redaction
marker, and a Monitor (whose output streams past every hook), are blocked with the fixed sentence
that tells the model why; the forms a red team found passing (a pretty-printed pair, a label in
strong emphasis); Codex's interactive session, refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_mock import ClaudeModel, print_settings, request_text, result_text, run_claude, tool_results

SECRET = "ghp_" + "Q7rT2vX9bN4mK8pL3sW6" + "yZ1aC5dE0fG2"
ENV_FILE = "LOG_LEVEL=debug\nGITHUB_TOKEN=%s\nPORT=8080\n" % SECRET
MARKER = "<redacted:credential>"
MARKER_WRITE = ("This tool call was blocked by local hook policy: its new content holds "
                "<redacted:credential>, which stands for a credential hidden from you; write the "
                "file without it.")


@pytest.fixture
def claude(agent_cli):
    return agent_cli("claude-code")


def claude_project(tmp_path, files):
    """A Claude Code project wired to magihook with redact_tool_output, holding FILES."""
    folder = tmp_path / "project"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".magi-code").mkdir()
    (tmp_path / "claude-home").mkdir()
    settings = folder / ".magi-code" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"enabled": True, "redact_tool_output": True}}))
    (folder / ".claude" / "settings.json").write_text(json.dumps(print_settings(settings), indent=2))
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def project(tmp_path):
    return claude_project(tmp_path, {"app.env": ENV_FILE})


def run(claude, project: Path, calls):
    with ClaudeModel(calls) as model:
        done = run_claude(claude, project, project.parent / "claude-home", model)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_credential_shown_by_cat_and_read_reaches_no_request_and_the_rest_does(claude, project):
    done = run(claude, project, [
        ("Bash", {"command": "cat app.env", "description": "scripted"}),
        ("Read", {"file_path": str(project / "app.env")}),
    ])
    texts = [request_text(request.body) for request in done.model.requests]
    assert not any(SECRET in text for text in texts)
    last = texts[-1]
    assert "LOG_LEVEL=debug" in last and "PORT=8080" in last and "GITHUB_TOKEN=" + MARKER in last
    assert last.count("GITHUB_TOKEN=" + MARKER) >= 2  # both the Bash and the Read result


def test_writing_the_marker_is_blocked_and_the_model_is_told_why(claude, project):
    # A new file: Claude Code itself refuses to overwrite one the model has not read.
    done = run(claude, project, [
        ("Write", {"file_path": str(project / "copy.env"), "content": "GITHUB_TOKEN=%s\n" % MARKER}),
    ])
    assert not (project / "copy.env").exists()
    results = done.tool_results_seen()
    assert len(results) == 1 and results[0].get("is_error") is True
    assert MARKER_WRITE in result_text(results[0])


MONITOR_DENIED = ("This tool call was blocked by local hook policy: Monitor streams its output to you "
                  "where the credentials in it cannot be redacted; use Bash instead.")


def test_monitor_is_denied_with_why_and_bash_cat_is_still_redacted(claude, project, agent_release):
    # 2.1.332's Monitor hands the model each line the command prints as a notification of its
    # own, which no hook sees: unwired by name it sent the whole file.
    if agent_release("claude-code") < (2, 1, 332):
        pytest.skip("no Monitor tool before 2.1.332")
    done = run(claude, project, [
        ("Monitor", {"command": "cat app.env", "description": "scripted"}),
        ("Bash", {"command": "cat app.env", "description": "scripted"}),
    ])
    texts = [request_text(request.body) for request in done.model.requests]
    assert not any(SECRET in text for text in texts)
    results = done.tool_results_seen()
    assert len(results) == 2
    assert results[0].get("is_error") is True and MONITOR_DENIED in result_text(results[0])
    assert "LOG_LEVEL=debug" in result_text(results[1]) and "GITHUB_TOKEN=" + MARKER in result_text(results[1])


# --- Gemini CLI (pinned): the AfterTool deny's reason is the output the model gets --------------------

def gemini_project(agent_cli, tmp_path, files):
    """A Gemini CLI run wired to magihook with redact_tool_output, its project holding FILES."""
    from gemini_mock import GeminiRun

    run = GeminiRun(agent_cli("gemini"), tmp_path)
    for name, text in files.items():
        (run.project / name).write_text(text)
    run.magihook_settings({"hooks": {"enabled": True, "redact_tool_output": True}})
    run.wire()
    return run


@pytest.fixture
def gemini(agent_cli, tmp_path):
    return gemini_project(agent_cli, tmp_path, {"app.env": ENV_FILE})


@pytest.mark.parametrize("tool, args", [
    ("run_shell_command", {"command": "cat app.env", "description": "e2e"}),
    ("read_file", {"file_path": "app.env"}),
])
def test_gemini_shows_the_model_the_redacted_output(gemini, tool, args):
    from gemini_mock import GeminiModel, function_responses

    model = GeminiModel(tool, args)
    with model:
        outcome = gemini.run(model)
    assert outcome.returncode == 0, outcome
    assert not any(SECRET in request.raw.decode("utf-8", "replace") for request in model.requests)
    (response,) = function_responses(model.after_tool())
    shown = json.dumps(response["response"])
    assert "LOG_LEVEL=debug" in shown and "PORT=8080" in shown and "GITHUB_TOKEN=" + MARKER in shown


def test_gemini_a_background_command_s_output_read_back_is_redacted(gemini):
    # run_shell_command with is_background, then read_background_output (a tool no row wraps) with
    # the pid the first result names: the file's credential reached the model whole before.
    import re

    from gemini_mock import GeminiModel, _chunk, function_responses, send_sse

    class ReadsBack(GeminiModel):
        def respond(self, handler, request):
            done = (function_responses(request) if request.method == "POST"
                    and ":streamGenerateContent" in request.path else [])
            if len(done) == 1:
                pid = re.search(r"PID: ([0-9]+)", json.dumps(done[0]))
                args = {"pid": int(pid.group(1)) if pid else 1, "delay_ms": 1500}
                send_sse(handler, [_chunk([{"functionCall": {"name": "read_background_output", "args": args}}])])
                return
            GeminiModel.respond(self, handler, request)

    model = ReadsBack("run_shell_command", {"command": "sleep 1; cat app.env; sleep 5", "is_background": True,
                                            "description": "e2e"})
    with model:
        outcome = gemini.run(model)
    assert outcome.returncode == 0, outcome
    assert not any(SECRET in request.raw.decode("utf-8", "replace") for request in model.requests)
    (read_back,) = [each for request in model.turn_requests() for each in function_responses(request)
                    if each["name"] == "read_background_output"][-1:]
    shown = json.dumps(read_back["response"])
    assert "LOG_LEVEL=debug" in shown and "PORT=8080" in shown and "GITHUB_TOKEN=" + MARKER in shown


# --- Codex (pinned): the PostToolUse block's reason is the output the model gets -----------------------

def codex_project(tmp_path):
    """A Codex project holding app.env, and magihook settings with redact_tool_output."""
    folder = tmp_path / "codex-project"
    folder.mkdir()
    (folder / "app.env").write_text(ENV_FILE)
    config = tmp_path / "magihook-settings.json"
    config.write_text(json.dumps({"hooks": {"enabled": True, "redact_tool_output": True}}))
    return folder, config


def test_codex_shows_the_model_the_redacted_shell_output(agent_cli, tmp_path):
    from codex_mock import CodexModel, message, run_codex, shell_call

    folder, config = codex_project(tmp_path)
    with CodexModel([[shell_call("cat app.env")], [message()]]) as model:
        done = run_codex(agent_cli("codex"), model, folder, tmp_path / "scratch", config)
    assert done.returncode == 0, done
    assert SECRET not in model.all_text()
    shown = model.tool_output("call_shell_1")
    assert "LOG_LEVEL=debug" in shown and "PORT=8080" in shown and "GITHUB_TOKEN=" + MARKER in shown


TYPED_SESSION_DENIED = ("what you type into an interactive session reaches you where the credentials "
                        "in it cannot be redacted; run each command on its own.")


def test_codex_is_denied_an_interactive_session_whose_typed_commands_no_hook_sees(agent_cli, tmp_path):
    # exec_command with a TTY, then a `cat` typed through write_stdin: no hook sees its output
    # (tests/e2e/test_codex.py), so the session is refused before it starts.
    from codex_mock import CodexModel, message, run_codex, shell_call

    folder, config = codex_project(tmp_path)
    with CodexModel([[shell_call("bash", tty=True, yield_time_ms=500)], [message()]]) as model:
        done = run_codex(agent_cli("codex"), model, folder, tmp_path / "scratch", config)
    assert done.returncode == 0, done
    assert TYPED_SESSION_DENIED in model.tool_output("call_shell_1")
    assert "session ID" not in model.tool_output("call_shell_1")


def assert_redacted_and_the_rest_shown(model, shown):
    """No request to `model` holds the credential; each text in `shown` (what the model read
    from one tool) holds the file's other lines and the marker in its place."""
    assert not any(SECRET in request.raw.decode("utf-8", "replace") for request in model.requests)
    for text in shown:
        assert "LOG_LEVEL=debug" in text and "PORT=8080" in text and "GITHUB_TOKEN=" + MARKER in text


def redacting_project(tmp_path, hooks_folder):
    folder = tmp_path / "project"
    (folder / hooks_folder).mkdir(parents=True)
    (folder / "app.env").write_text(ENV_FILE)
    config = tmp_path / "magihook-settings.json"
    config.write_text(json.dumps({"hooks": {"enabled": True, "redact_tool_output": True}}))
    return folder, config


# --- GitHub Copilot CLI (pinned): post-tool modifiedResult is the output the model gets ----------------

def test_copilot_shows_the_model_the_redacted_output(agent_cli, tmp_path):
    from copilot_mock import run_copilot
    from wiring import print_settings as wiring

    folder, config = redacting_project(tmp_path, ".github/hooks")
    (folder / ".github" / "hooks" / "magihook.json").write_text(json.dumps(wiring("copilot", config)))
    (tmp_path / "copilot-home").mkdir()
    with ClaudeModel([("bash", {"command": "cat app.env", "description": "scripted"}),
                      ("view", {"path": str(folder / "app.env")})]) as model:
        done = run_copilot(agent_cli("copilot"), folder, tmp_path / "copilot-home", model)
    assert done.returncode == 0, done.stderr[-3000:]
    shown = [result_text(block) for block in tool_results(model.conversation()[-1].body)]
    assert len(shown) == 2
    assert_redacted_and_the_rest_shown(model, shown)


# --- Qwen Code (pinned): continue:false's stopReason after a tool is the output the model gets ---------

def test_qwen_shows_the_model_the_redacted_output_and_the_turn_goes_on(agent_cli, tmp_path):
    from chat_mock import FINAL_TEXT, ChatModel
    from qwen_mock import run_qwen
    from wiring import print_settings as wiring

    folder, config = redacting_project(tmp_path, ".qwen")
    (folder / ".qwen" / "settings.json").write_text(json.dumps(wiring("qwen", config)))
    with ChatModel([("run_shell_command", {"command": "cat app.env"}),
                    ("read_file", {"file_path": str(folder / "app.env")})]) as model:
        done = run_qwen(agent_cli("qwen"), folder, tmp_path / "qwen-home", model)
    assert done.returncode == 0, done.stderr[-3000:]
    shown = done.tool_texts()
    assert len(shown) == 2
    assert_redacted_and_the_rest_shown(model, shown)
    # The turn went on: both calls were answered and the model's final text ended it.
    assert (done.final()["result"], len(model.conversation())) == (FINAL_TEXT, 3)


def test_copilot_a_background_command_s_output_read_back_is_redacted(agent_cli, tmp_path):
    # bash in async mode, then read_bash (a tool no row wraps): the credential reached the model
    # before magihook redacted the output of unwrapped tools (Copilot runs adapt for every tool).
    from copilot_mock import run_copilot
    from wiring import print_settings as wiring

    folder, config = redacting_project(tmp_path, ".github/hooks")
    (folder / ".github" / "hooks" / "magihook.json").write_text(json.dumps(wiring("copilot", config)))
    (tmp_path / "copilot-home").mkdir()
    with ClaudeModel([("bash", {"command": "sleep 3; cat app.env; sleep 1", "description": "scripted",
                                "mode": "async", "shellId": "s1", "initial_wait": 1}),
                      ("read_bash", {"shellId": "s1", "delay": 5})]) as model:
        done = run_copilot(agent_cli("copilot"), folder, tmp_path / "copilot-home", model)
    assert done.returncode == 0, done.stderr[-3000:]
    shown = [result_text(block) for block in tool_results(model.conversation()[-1].body)]
    assert_redacted_and_the_rest_shown(model, shown[-1:])


# --- the forms a red team found passing (issue 23's held-out check, emulated) --------------------------

# The issue's own pair form pretty-printed, as `json.dumps(indent=2)` and `jq .` write JSON, and a
# label in Markdown's strong emphasis; the same value in `api_key: X` was redacted before.
FORM_SECRET = "Xk9mQ2vR7tLp4wZs8N"
FORM_FILES = {
    "app.json": "%s\n" % json.dumps({"port": 8080, "headers": [["X-Api-Key", FORM_SECRET]]}, indent=2),
    "NOTES.md": "# Staging\n\n**API key:** %s\n\nPORT=8080\n" % FORM_SECRET,
}


@pytest.mark.parametrize("name", sorted(FORM_FILES))
def test_claude_code_cat_and_read_of_a_form_reach_no_request(claude, tmp_path, name):
    folder = claude_project(tmp_path, FORM_FILES)
    done = run(claude, folder, [("Bash", {"command": "cat %s" % name, "description": "scripted"}),
                                ("Read", {"file_path": str(folder / name)})])
    texts = [request_text(request.body) for request in done.model.requests]
    assert any("8080" in text for text in texts)          # the file's other lines did reach it
    assert not any(FORM_SECRET in text for text in texts)


@pytest.mark.parametrize("name", sorted(FORM_FILES))
@pytest.mark.parametrize("tool", ["run_shell_command", "read_file"])
def test_gemini_cat_and_read_of_a_form_reach_no_request(agent_cli, tmp_path, tool, name):
    from gemini_mock import GeminiModel

    gemini = gemini_project(agent_cli, tmp_path, FORM_FILES)
    args = {"command": "cat %s" % name, "description": "e2e"} if tool == "run_shell_command" else {
        "file_path": name}
    with GeminiModel(tool, args) as model:
        outcome = gemini.run(model)
    assert outcome.returncode == 0, outcome
    raw = [request.raw.decode("utf-8", "replace") for request in model.requests]
    assert any("8080" in text for text in raw)
    assert not any(FORM_SECRET in text for text in raw)
