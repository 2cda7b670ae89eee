"""Hostile settings files (issue 15, item 5): each is exit 2 with a located message, never a
traceback or a hang, and `run --stream` turns it into error lines and goes on."""

from __future__ import annotations

import json
import os
import time

import pytest
from conftest import bash_event, run_cli

import magihook

DEEP = 100_000
DIGITS = "1" * 5000

HOSTILE = [
    ("settings.json", '{"hooks": {"x": ' + "[" * DEEP + "]" * DEEP + "}}",
     "invalid JSON at line 1, column 79: nested deeper than 64 levels"),
    ("settings.json", '{"other":\n  ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}",
     "invalid JSON at line 2, column 381: nested deeper than 64 levels"),
    ("settings.toml", "a = " + "[" * DEEP + "]" * DEEP + "\n",
     "invalid TOML: nested deeper than 64 levels (at line 1, column 69)"),
    ("settings.toml", "[hooks]\nx = " + "{b = " * DEEP + "1" + "}" * DEEP + "\n",
     "invalid TOML: nested deeper than 64 levels (at line 2, column 325)"),
    ("settings.toml", ".".join(["a"] * DEEP) + " = 1\n",
     "invalid TOML: a dotted key has more than 64 parts (at line 1, column 128)"),
    ("settings.toml", "[" + ".".join(["t"] * DEEP) + "]\n",
     "invalid TOML: a dotted key has more than 64 parts (at line 1, column 129)"),
    ("settings.json", '{"other": %s}' % DIGITS,
     "invalid JSON at line 1, column 11: a number is longer than 4300 digits"),
    ("settings.json", '{"hooks": {"timeout_seconds": -%s}}' % DIGITS,
     "invalid JSON at line 1, column 32: a number is longer than 4300 digits"),
    ("settings.toml", "[hooks]\ntimeout_seconds = %s\n" % DIGITS,
     "invalid TOML: a number is longer than 4300 digits (at line 2, column 19)"),
    ("settings.json", '{"other": 0.%s}' % DIGITS,
     "invalid JSON at line 1, column 13: a number is longer than 4300 digits"),
    ("settings.toml", "other = 1_%s\n" % DIGITS,
     "invalid TOML: a number is longer than 4300 digits (at line 1, column 9)"),
    ("settings.json", '{"hooks": {"enabled": true, "before_tool": [{"command": "true", '
     '"command": "touch x"}]}}', "$.hooks.before_tool[0]: duplicate key 'command'"),
    ("settings.json", '{"hooks": {"enabled": true}, "hooks": {"enabled": false}}',
     "$: duplicate key 'hooks'"),
    ("settings.json", '{"tools": {"bash": {"absolute_paths": false, "absolute_paths": true}}}',
     "$.tools.bash: duplicate key 'absolute_paths'"),
    ("settings.toml", '[hooks]\nenabled = true\n[[hooks.before_tool]]\ncommand = "true"\n'
     'command = "touch x"\n', "invalid TOML: Cannot overwrite a value (at line 5, column 20)"),
    ("settings.toml", "[hooks]\nenabled = true\n[hooks]\nenabled = false\n",
     "invalid TOML: Cannot declare ('hooks',) twice (at line 3, column 7)"),
]


def write(path, text):
    path.write_text(text)
    return str(path)


# Short ids: pytest puts the test id in the environment of every child (PYTEST_CURRENT_TEST), and
# an id holding a 100,000-level text would pass the kernel's bound on one environment string.
HOSTILE_IDS = ["json-deep-arrays", "json-deep-objects", "toml-deep-arrays", "toml-deep-inline",
               "toml-dotted-key", "toml-dotted-header", "json-long-int", "json-long-int-in-hooks",
               "toml-long-int", "json-long-fraction", "toml-long-int-underscores",
               "json-duplicate-command", "json-duplicate-hooks", "json-duplicate-in-tools",
               "toml-duplicate-command", "toml-duplicate-table"]


@pytest.mark.parametrize("name, text, message", HOSTILE, ids=HOSTILE_IDS)
def test_hostile_file_is_exit_2_with_a_located_message(tmp_path, name, text, message):
    path = write(tmp_path / name, text)
    for command in (["validate"], ["config"], ["run", "--phase", "before_tool"]):
        result = run_cli(*command, "--config", path, event=bash_event(), cwd=tmp_path)
        assert (result.returncode, result.stdout, result.stderr) == (
            2, "", "magihook: %s: %s\n" % (path, message)), command


def test_strings_and_comments_that_look_hostile_are_fine(tmp_path):
    # Brackets, dots and digits inside strings and comments are not structure.  (In a label:
    # validate rejects a command holding `{`, which preflight always rejects.)
    hooks = {"enabled": True, "before_tool": [{"command": "./a.sh", "label": "[{." * 100 + DIGITS}]}
    path = write(tmp_path / "settings.json", json.dumps({"hooks": hooks, "other": ["[" * 100]}))
    result = run_cli("validate", "--config", path)
    assert (result.returncode, result.stderr) == (0, "")
    toml = ('# %s %s\n[hooks]\nenabled = true\n[[hooks.before_tool]]\ncommand = "./a.sh"\n'
            'label = """x%s\n"""\n[other]\nnote = \'a.%s\'\n' % ("[" * 100, DIGITS, "{" * 100, "." * 100))
    result = run_cli("validate", "--config", write(tmp_path / "settings.toml", toml))
    assert (result.returncode, result.stderr) == (0, "")


def test_a_file_just_inside_the_bounds_is_read(tmp_path):
    nested = "[" * 60 + "]" * 60
    text = '{"other": %s, "n": %s, "hooks": {"enabled": true}}' % (nested, "9" * 4300)
    assert run_cli("validate", "--config", write(tmp_path / "s.json", text)).returncode == 0


@pytest.mark.parametrize("where", ["explicit", "discovered"])
def test_a_fifo_at_the_settings_path_is_refused_without_blocking(tmp_path, where):
    folder = tmp_path / ".magi-code"
    folder.mkdir()
    fifo = folder / "settings.json"
    os.mkfifo(str(fifo))  # no writer ever opens it: reading it would block forever
    args = ["--config", str(fifo)] if where == "explicit" else []
    result = run_cli("run", "--phase", "before_tool", *args, event=bash_event(), cwd=tmp_path,
                     timeout=60)
    shown = str(fifo) if where == "explicit" else os.path.join(
        str(tmp_path), ".magi-code", "settings.json")
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", "magihook: %s: settings path is not a regular file\n" % shown)


def test_a_device_at_the_settings_path_is_refused(tmp_path):
    result = run_cli("validate", "--config", os.devnull)
    assert (result.returncode, result.stderr) == (
        2, "magihook: %s: settings path is not a regular file\n" % os.devnull)


def test_stream_turns_each_hostile_file_into_error_lines_and_goes_on(tmp_path):
    lines = [dict(bash_event(call_id="c%d" % n), phase="before_tool") for n in range(2)]
    stdin = "".join(json.dumps(line) + "\n" for line in lines).encode()
    fifo = tmp_path / "fifo.json"
    os.mkfifo(str(fifo))
    cases = [(write(tmp_path / ("s%d%s" % (n, name[8:])), text), message)
             for n, (name, text, message) in enumerate(HOSTILE)]
    cases.append((str(fifo), "settings path is not a regular file"))
    for path, message in cases:
        result = run_cli("run", "--stream", "--config", path, stdin=stdin, cwd=tmp_path)
        error = json.dumps({"error": "%s: %s" % (path, message)}, separators=(",", ":"))
        assert (result.returncode, result.stdout, result.stderr) == (
            0, error + "\n" + error + "\n", ""), path


def test_the_api_raises_settings_error(tmp_path):
    for n, (name, text, message) in enumerate(HOSTILE):
        path = write(tmp_path / ("a%d%s" % (n, name[8:])), text)
        with pytest.raises(magihook.SettingsError) as raised:
            magihook.load_settings(path)
        assert str(raised.value) == "%s: %s" % (path, message)


def test_the_api_raises_settings_error_for_a_path_no_file_can_have(tmp_path):
    # os.open raises ValueError (no OSError) for a NUL byte or a lone surrogate: load_settings
    # once let it out.  The message escapes them (a NUL would reach a terminal or a log).
    for name, message in (("a\x00b.json", "a\\x00b.json: settings path contains a NUL byte"),
                          ("a\ud800.json", "a\\ud800.json: settings path holds a character no "
                                           "path can be written with")):
        with pytest.raises(magihook.SettingsError) as raised:
            magihook.load_settings(os.path.join(str(tmp_path), name))
        assert str(raised.value) == os.path.join(str(tmp_path), message)


def test_digit_runs_just_under_the_bound_are_cheap(tmp_path):
    # 240 strings of 4300 digits: a check that restarted inside each run took longer than the
    # bound below (the figures: bench/README.md, *Other costs measured in this release*).
    text = '{"other": [%s1]}' % (('"%s",' % ("9" * 4300)) * 240)
    path = write(tmp_path / "s.json", text)
    started = time.process_time()
    magihook.load_settings(path)
    assert time.process_time() - started < 1.5  # CPU time, so load does not count
