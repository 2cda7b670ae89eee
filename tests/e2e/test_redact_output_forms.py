"""hooks.redact_tool_output with the real agents, for the forms a red team found passing (issue
23's held-out check: a file with a credential, shown and read by the agent's own tools, the
model's requests recorded): the issue's own pair form pretty-printed, as `json.dumps(indent=2)`
and `jq .` write JSON, and a label in Markdown's strong emphasis.  Claude Code and Gemini CLI,
by their shell tool (`cat`) and their read tool."""

from __future__ import annotations

import json

import pytest
from claude_mock import ClaudeModel, print_settings, request_text, run_claude
from gemini_mock import GeminiModel

R = "Xk9mQ2vR7tLp4wZs8N"
FILES = {
    "app.json": "%s\n" % json.dumps({"port": 8080, "headers": [["X-Api-Key", R]]}, indent=2),
    "NOTES.md": "# Staging\n\n**API key:** %s\n\nPORT=8080\n" % R,
}


@pytest.fixture
def claude(agent_cli):
    return agent_cli("claude-code")


@pytest.fixture
def claude_project(tmp_path):
    folder = tmp_path / "project"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".magi-code").mkdir()
    (tmp_path / "claude-home").mkdir()
    settings = folder / ".magi-code" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"enabled": True, "redact_tool_output": True}}))
    (folder / ".claude" / "settings.json").write_text(json.dumps(print_settings(settings), indent=2))
    for name, text in FILES.items():
        (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize("name", sorted(FILES))
def test_claude_code_cat_and_read_of_the_file_reach_no_request(claude, claude_project, name):
    calls = [("Bash", {"command": "cat %s" % name, "description": "scripted"}),
             ("Read", {"file_path": str(claude_project / name)})]
    with ClaudeModel(calls) as model:
        done = run_claude(claude, claude_project, claude_project.parent / "claude-home", model)
    assert done.returncode == 0, done.stderr[-3000:]
    texts = [request_text(request.body) for request in done.model.requests]
    assert any("8080" in text for text in texts)          # the file's other lines did reach it
    assert not any(R in text for text in texts)


@pytest.fixture
def gemini(agent_cli, tmp_path):
    from gemini_mock import GeminiRun

    run = GeminiRun(agent_cli("gemini"), tmp_path)
    for name, text in FILES.items():
        (run.project / name).write_text(text)
    run.magihook_settings({"hooks": {"enabled": True, "redact_tool_output": True}})
    run.wire()
    return run


@pytest.mark.parametrize("name", sorted(FILES))
@pytest.mark.parametrize("tool", ["run_shell_command", "read_file"])
def test_gemini_cat_and_read_of_the_file_reach_no_request(gemini, tool, name):
    args = {"command": "cat %s" % name, "description": "e2e"} if tool == "run_shell_command" else {
        "file_path": name}
    model = GeminiModel(tool, args)
    with model:
        outcome = gemini.run(model)
    assert outcome.returncode == 0, outcome
    raw = [request.raw.decode("utf-8", "replace") for request in model.requests]
    assert any("8080" in text for text in raw)
    assert not any(R in text for text in raw)
