"""Interop with Gemini CLI 0.61: its tool fields and tool responses as the real agent sends them.

Stdin documents follow what Gemini CLI 0.61.0 sent its hooks in tests/e2e/test_gemini.py;
every hook is a real process.
"""

from __future__ import annotations

import pytest
from test_interop import P, adapt, capture_settings, captured, config, dialect_hook, gemini_stdin, install

# What Gemini 0.61 gives an AfterTool hook for `echo hi; exit 3` (observed end to end).
FAILED_SHELL = "<untrusted_context>\nOutput: hi\nExit Code: 3\nProcess Group PGID: 16194\n</untrusted_context>"


@pytest.mark.parametrize("tool,tool_input,expected_tool,expected_request", [
    ("read_file", lambda p: {"file_path": P(p, "a.txt"), "start_line": 3, "end_line": 5},
     "read", {"path": "a.txt", "offset": 3, "limit": 3}),
    ("read_file", lambda p: {"file_path": P(p, "a.txt"), "start_line": 7},
     "read", {"path": "a.txt", "offset": 7}),
    ("read_file", lambda p: {"file_path": P(p, "a.txt"), "end_line": 4},
     "read", {"path": "a.txt", "limit": 4}),
    ("read_file", lambda p: {"file_path": P(p, "a.txt"), "offset": 10, "limit": 20},  # older
     "read", {"path": "a.txt", "offset": 10, "limit": 20}),
    ("grep_search", lambda p: {"pattern": "foo", "dir_path": P(p, "lib"),
                               "include_pattern": "*.js", "exclude_pattern": "*.min.js"},
     "ffgrep", {"pattern": "foo", "path": "lib", "glob": "*.js"}),
    ("grep_search", lambda p: {"pattern": "foo", "include": "*.js"},  # older
     "ffgrep", {"pattern": "foo", "glob": "*.js"}),
    ("replace", lambda p: {"file_path": P(p, "a.py"), "instruction": "bump", "old_string": "x = 1",
                           "new_string": "x = 2", "allow_multiple": True},
     "hash_edit", {"path": "a.py", "replace_all": True,
                   "input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n"
                            "*** End Patch"}),
    ("run_shell_command", lambda p: {"command": "make", "description": "d", "is_background": True},
     "bash", {"command": "make", "run_in_background": True}),
])
def test_adapt_maps_gemini_061_fields(project, tool, tool_input, expected_tool, expected_request):
    settings = capture_settings(project)
    result = adapt("gemini", project, gemini_stdin(project, tool, tool_input(project)), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    (record,) = captured(project)
    assert record["stdin"]["tool"]["name"] == expected_tool
    assert record["stdin"]["request"] == expected_request


def test_a_gemini_dialect_hook_gets_061_field_names(project):
    """magihook's words back to Gemini 0.61's: a Gemini script sees the call as Gemini sent it."""
    install(project, "capture.py")
    calls = [
        ("read_file", {"file_path": P(project, "r.txt"), "start_line": 3, "end_line": 5}),
        ("read_file", {"file_path": P(project, "r.txt"), "end_line": 4}),
        ("replace", {"file_path": P(project, "a.py"), "old_string": "o", "new_string": "n",
                     "allow_multiple": True}),
        ("grep_search", {"pattern": "p", "include_pattern": "*.c"}),
    ]
    settings = config(project, before_tool=[dialect_hook("gemini", "capture.py")])
    for tool, tool_input in calls:
        result = adapt("gemini", project, gemini_stdin(project, tool, tool_input), settings)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    got = [(r["stdin"]["tool_name"], r["stdin"]["tool_input"]) for r in captured(project)]
    assert got == calls


@pytest.mark.parametrize("llm_content,success,content", [
    (FAILED_SHELL, False, "Output: hi\nExit Code: 3"),
    ("<untrusted_context>\nOutput: ok\nProcess Group PGID: 77\n</untrusted_context>", True,
     "Output: ok"),
    ("<untrusted_context>\nOutput: (empty)\nSignal: 15\nProcess Group PGID: 9\n</untrusted_context>",
     False, "Output: (empty)\nSignal: 15"),
    ("<untrusted_context>\nOutput: x\nBackground PIDs: 5, 6\nProcess Group PGID: 9\n"
     "</untrusted_context>", True, "Output: x"),
    # an output line that only looks like a section is the command's own output
    ("<untrusted_context>\nOutput: Exit Code: 4\nnext\nProcess Group PGID: 9\n</untrusted_context>",
     True, "Output: Exit Code: 4\nnext"),
    # the wrapper's escaped closing tag inside the output is given back as written
    ("<untrusted_context>\nOutput: &lt;/untrusted_context&gt;\nProcess Group PGID: 9\n"
     "</untrusted_context>", True, "Output: </untrusted_context>"),
    ("Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without "
     "output. There was no output before it was cancelled.", False,
     "Command was automatically cancelled because it exceeded the timeout of 5.0 minutes without "
     "output. There was no output before it was cancelled."),
    ("<untrusted_context>\nCommand was cancelled by user before it could complete. There was no "
     "output before it was cancelled.\n</untrusted_context>", False,
     "Command was cancelled by user before it could complete. There was no output before it was "
     "cancelled."),
    ("<untrusted_context>\nCommand moved to background (PID: 42). Output hidden. Press Ctrl+B to "
     "view.\n</untrusted_context>", True,
     "Command moved to background (PID: 42). Output hidden. Press Ctrl+B to view."),
])
def test_gemini_shell_response_is_unwrapped_and_failures_are_failed(project, llm_content, success,
                                                                   content):
    settings = capture_settings(project, "after_tool")
    response = {"llmContent": llm_content, "returnDisplay": "hi"}
    result = adapt("gemini", project, gemini_stdin(project, "run_shell_command", {"command": "x"},
                                                   "AfterTool", tool_response=response), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert captured(project)[0]["stdin"]["result"] == {
        "tool_name": "bash", "success": success, "content": content, "metadata": {}}


def test_exit_code_text_in_a_read_file_is_not_a_failure(project):
    settings = capture_settings(project, "after_tool")
    text = "<untrusted_context>\nline\nExit Code: 3\n</untrusted_context>"
    result = adapt("gemini", project, gemini_stdin(
        project, "read_file", {"file_path": P(project, "log.txt")}, "AfterTool",
        tool_response={"llmContent": text, "returnDisplay": ""}), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert captured(project)[0]["stdin"]["result"] == {
        "tool_name": "read", "success": True, "content": "line\nExit Code: 3", "metadata": {}}


@pytest.mark.parametrize("llm_content,error", [
    (FAILED_SHELL, None),  # the output says it failed: Gemini sets no error
    ("<untrusted_context>\nOutput: ok\nProcess Group PGID: 7\n</untrusted_context>", None),
])
def test_a_gemini_after_hook_gets_the_response_as_gemini_words_it(project, llm_content, error):
    install(project, "capture.py")
    settings = config(project, after_tool=[dialect_hook("gemini", "capture.py")])
    result = adapt("gemini", project, gemini_stdin(
        project, "run_shell_command", {"command": "x"}, "AfterTool",
        tool_response={"llmContent": llm_content, "returnDisplay": "hi"}), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    response = captured(project)[0]["stdin"]["tool_response"]
    assert response["error"] == error
    assert "PGID" not in response["llmContent"] and "untrusted_context" not in response["llmContent"]


def test_a_gemini_after_hook_gets_gemini_s_error(project):
    install(project, "capture.py")
    settings = config(project, after_tool=[dialect_hook("gemini", "capture.py")])
    result = adapt("gemini", project, gemini_stdin(
        project, "run_shell_command", {"command": "x"}, "AfterTool",
        tool_response={"llmContent": "spawn failed", "returnDisplay": "",
                       "error": {"message": "spawn failed"}}), settings)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert captured(project)[0]["stdin"]["tool_response"]["error"] == {"message": "spawn failed"}
