"""Section 6, input events: reading and validating the event a caller sends.

Broken JSON, invalid UTF-8, nesting, number and size caps, wrong types and unknown or missing
keys are each exit 2 with one line on stderr, before any hook starts.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest
from conftest import MAGIHOOK_ARGV, PROMPT, bash_event, run_cli, write_script, write_settings
from conftest import full_hook as hook


def deep(levels, opener, closer):
    return opener * levels + closer * levels


BAD_INPUT = [
    (b"{\"tool\": {\"name\": \"bash\"}, \"request\": {", "input is not valid JSON: Expecting "
     "property name enclosed in double quotes at line 1, column 40"),
    (b"not json", "input is not valid JSON: Expecting value at line 1, column 1"),
    (deep(100_000, b"[", b"]"), "input is nested deeper than 256 levels"),
    (deep(100_000, b'{"a":', b"}")[:-100_000] + b"1" + b"}" * 100_000,
     "input is nested deeper than 256 levels"),
    (b'{"tool": {"name": "bash"}, "request": {"x": ' + deep(300, b"[", b"]") + b"}}",
     "input is nested deeper than 256 levels"),
    (b"\xff\xfe{}", "input is not valid UTF-8 (byte 0)"),
    (b'{"tool": {"name": "bash"}, "request": {"command": "\xc3\x28"}}',
     "input is not valid UTF-8 (byte 51)"),
    (b'{"tool": {"name": "bash"}, "request": {"x": NaN}}',
     "input is not valid JSON: NaN is not valid JSON"),
    (b'{"tool": {"name": "bash"}, "request": {"x": Infinity}}',
     "input is not valid JSON: Infinity is not valid JSON"),
    (b'{"tool": {"name": "bash"}, "request": {"x": -Infinity}}',
     "input is not valid JSON: -Infinity is not valid JSON"),
    (b'{"tool": {"name": "bash"}, "request": {"x": 1e999}}',
     "input has a number too large to represent (the limit is about 1.8e308)"),
    (b'{"tool": {"name": "bash"}, "request": {"x": -' + b"9" * 4301 + b"}}",
     "input has an integer longer than 4300 digits"),
    (b"\xef\xbb\xbf{}", "input is not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) "
                        "at line 1, column 1"),
    # Merged from test_run_core.py's bad-input test (its NaN case and "[]" were the same bytes as
    # the NaN case above and WRONG_TYPES' array case).
    (b"", "input is empty: expected one JSON object"),
    (b"{", "input is not valid JSON: Expecting property name enclosed in double quotes at "
           "line 1, column 2"),
    (b"\xff{}", "input is not valid UTF-8 (byte 0)"),
    (b'{"request": {}}', "$.tool: missing (expected an object)"),
    (b'{"tool": {"name": 1}, "request": {}}', "$.tool.name: expected a string, got an integer"),
    (b'{"tool": {"name": "bash"}, "request": "ls"}', "$.request: expected an object, "
                                                     "got a string"),
    (b'{"tool": {"name": "bash"}, "request": {}, "extra": 1}',
     "$.extra: unknown key for phase before_tool"),
    (b'{"tool": {"name": "bash"}, "request": {}, "phase": "after_tool"}',
     "$.phase: does not match the phase being run (before_tool)"),
    (b'{"tool": {"name": "bash"}, "request": {}, "context": {"subagent": "yes"}}',
     "$.context.subagent: expected a boolean, got a string"),
]

WRONG_TYPES = [
    ("before_tool", [], "$: input must be a JSON object, got an array"),
    ("before_tool", "x", "$: input must be a JSON object, got a string"),
    ("before_tool", None, "$: input must be a JSON object, got null"),
    ("before_tool", 7, "$: input must be a JSON object, got an integer"),
    ("before_tool", {"tool": "bash", "request": {}}, "$.tool: expected an object, got a string"),
    ("before_tool", {"tool": {"name": ["bash"]}, "request": {}},
     "$.tool.name: expected a string, got an array"),
    ("before_tool", {"tool": {"name": "bash", "call_id": 5}, "request": {}},
     "$.tool.call_id: expected a string, got an integer"),
    ("before_tool", {"tool": {"name": "bash"}, "request": ["ls"]},
     "$.request: expected an object, got an array"),
    ("after_tool", {"tool": {"name": "bash"}, "request": {}, "result": "ok"},
     "$.result: expected an object, got a string"),
    ("before_tool", {"tool": {"name": "bash"}, "request": {}, "context": []},
     "$.context: expected an object, got an array"),
    ("before_tool", {"tool": {"name": "bash"}, "request": {}, "context": {"cwd": 1}},
     "$.context.cwd: expected a string, got an integer"),
    ("before_tool", {"tool": {"name": "bash"}, "request": {}, "context": {"turn_id": True}},
     "$.context.turn_id: expected a string, got a boolean"),
    ("before_tool", {"tool": {"name": "bash"}, "request": {}, "context": {"subagent": 1}},
     "$.context.subagent: expected a boolean, got an integer"),
    ("before_tool", {"tool": {"name": "bash"}, "request": {},
                     "context": {"invocation_mode": "tui"}},
     "$.context.invocation_mode: expected one of print, shell, mission_control, subagent"),
    ("before_tool", {"tool": {"name": "bash"}, "request": {}, "context": {"shell": "x"}},
     "$.context.shell: unknown context key"),
    ("after_assistant", {"text": 5}, "$.text: expected a string, got an integer"),
    ("after_reasoning", {"request": {"text": None}}, "$.request.text: expected a string, got null"),
    ("after_reasoning", {"request": "thinking"}, "$.request: expected an object, got a string"),
]


def run_input(project, stdin, phase="before_tool"):
    write_script(project, "mark.sh", "#!/bin/sh\necho ran > ran.txt\n")
    config = write_settings(project, {"enabled": True, phase: [hook("./mark.sh")]})
    started = time.monotonic()
    result = run_cli("run", "--phase", phase, "--config", str(config), stdin=stdin, cwd=project)
    assert time.monotonic() - started < PROMPT
    assert not (project / "ran.txt").exists()  # no hook ran
    return result


@pytest.mark.parametrize("stdin, message", BAD_INPUT, ids=[
    "truncated", "not-json", "arrays-100000-deep", "objects-100000-deep", "300-deep", "invalid-utf8-start",
    "bad-utf8-inside", "nan", "infinity", "minus-infinity", "1e999", "4301-digits", "utf8-bom",
    "empty", "one-brace", "invalid-utf8-then-object", "no-tool", "tool-name-integer",
    "request-string", "unknown-key", "other-phase", "subagent-string"])
def test_bad_input_is_exit_2_with_one_line(project, stdin, message):
    result = run_input(project, stdin)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", "magihook: %s\n" % message)


@pytest.mark.parametrize("phase, event, message", WRONG_TYPES)
def test_wrong_type_at_every_level_is_exit_2_with_one_line(project, phase, event, message):
    result = run_input(project, json.dumps(event).encode(), phase)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", "magihook: %s\n" % message)


def test_50_mib_request_from_a_writer_that_never_stops(project):
    write_settings(project, {"enabled": True, "before_tool": [hook("true")]})
    process = subprocess.Popen(
        [*MAGIHOOK_ARGV, "run", "--phase", "before_tool", "--config",
         str(project / "settings.json")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project)
    written = []

    def write_forever():
        chunk = b"x" * (1024 * 1024)
        try:
            process.stdin.write(b'{"tool": {"name": "bash"}, "request": {"command": "')
            while True:  # 50 MiB and counting: the writer only stops when magihook hangs up
                process.stdin.write(chunk)
                written.append(len(chunk))
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=write_forever)
    started = time.monotonic()
    writer.start()
    stdout, stderr = process.stdout.read(), process.stderr.read()
    process.wait(PROMPT)
    writer.join(PROMPT)
    assert time.monotonic() - started < PROMPT
    assert (process.returncode, stdout, stderr) == (
        2, b"", b"magihook: input event is larger than 33554432 bytes\n")
    assert not writer.is_alive()
    # magihook stopped reading at the cap (+ what the pipe buffers): it did not drain the writer.
    assert sum(written) < 34 * 1024 * 1024


def test_after_tool_needs_a_result(project):
    result = run_cli("run", "--phase", "after_tool", event=bash_event(), cwd=project)
    assert (result.returncode, result.stderr) == (
        2, "magihook: $.result: missing (expected an object)\n")


@pytest.mark.parametrize("phase, stdin, message", [
    ("before_tool", b'{"tool": {"name": "bash"}, "request": {}, "contxt": {}}',
     "$.contxt: unknown key for phase before_tool (did you mean 'context'?)"),
    ("before_tool", b'{"tool": {"name": "bash"}, "request": {}, "context": {"turnid": "t"}}',
     "$.context.turnid: unknown context key (did you mean 'turn_id'?)"),
    ("before_tool", b'{"tool": {}, "request": {}}', "$.tool.name: missing (expected a string)"),
    ("after_assistant", b'{"context": {}}', "$.text: missing (expected a string: the whole message text)"),
    ("after_reasoning", b'{"request": {}}', "$.request.text: missing (expected a string)"),
])
def test_missing_and_misspelled_keys_say_so(project, phase, stdin, message):
    result = run_cli("run", "--phase", phase, stdin=stdin, cwd=project)
    assert (result.returncode, result.stdout, result.stderr) == (2, "", "magihook: %s\n" % message)
