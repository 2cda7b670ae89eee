"""Settings files on disk: errors that name the file and place, TOML, validate / config / schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import EXAMPLES, MAGIHOOK, ROOT, run_cli

import magihook

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib


def write(path, text):
    path.write_text(text)
    return str(path)


# --- errors that say where ----------------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ('{"hooks": {"enabled": true,,}}', "invalid JSON at line 1, column 28: Expecting property name "
                                      "enclosed in double quotes"),
    ('{\n  "hooks": {\n    "enabled": tru\n  }\n}', "invalid JSON at line 3, column 16: Expecting value"),
    ("", "settings file is empty"),
    ("  \n", "settings file is empty"),
    ("[1, 2]", "$: settings must be a JSON object"),
    ('"hooks"', "$: settings must be a JSON object"),
    ('{"hooks": []}', "$.hooks: expected an object, got an array"),
    ('{"hooks": {"before_tool": [{"command": "x", "timeout": 3}]}}',
     "$.hooks.before_tool[0].timeout: unknown key 'timeout' (did you mean 'timeout_seconds'?)"),
    ('{"hooks": {"after_tool": [{"command": "x", "failure_policy": "block"}]}}',
     "$.hooks.after_tool[0].failure_policy: 'block' is only allowed for before_tool hooks"),
    ('{"hooks": {"failure_policy": "block", "after_tool": [{"command": "x"}]}}',
     "$.hooks.after_tool[0]: failure_policy 'block' is inherited from $.hooks.failure_policy and is "
     "only allowed for before_tool hooks; set this hook's failure_policy to 'ignore', 'warn' or 'fail'"),
    ('{"hooks": {"x": NaN}}', "invalid JSON: NaN is not valid JSON"),
])
def test_bad_settings_file_is_one_line_naming_file_and_place(tmp_path, text, message):
    path = write(tmp_path / "settings.json", text)
    for command in (["validate"], ["config"], ["run", "--phase", "before_tool"]):
        result = run_cli(*command, "--config", path, event={})
        assert (result.returncode, result.stdout, result.stderr) == (
            2, "", "magihook: %s: %s\n" % (path, message))


def test_invalid_utf8_and_directory_and_unreadable(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(b'{"hooks": "\xff"}')
    assert run_cli("validate", "--config", str(path)).stderr == (
        "magihook: %s: not valid UTF-8 at byte 11\n" % path)
    assert run_cli("validate", "--config", str(tmp_path)).stderr == (
        "magihook: %s: settings path is a directory\n" % tmp_path)
    if os.geteuid() != 0:  # root reads anything
        path.write_text("{}")
        path.chmod(0)
        assert run_cli("validate", "--config", str(path)).stderr == (
            "magihook: %s: cannot read settings file (EACCES)\n" % path)


def test_toml_syntax_error_has_line_and_column(tmp_path):
    path = write(tmp_path / "settings.toml", "[hooks]\nenabled = tru\n")
    result = run_cli("validate", "--config", path)
    assert result.returncode == 2
    assert result.stderr.startswith("magihook: %s: invalid TOML: " % path)
    assert "line 2, column 11" in result.stderr


def test_messages_never_echo_the_hook_command(tmp_path):
    secret = "./scripts/very-secret-hook.sh"
    for hook in ({"command": secret, "timeout_seconds": "5"}, {"command": secret, "payload": "none"},
                 {"command": secret, "extra": 1}, {"command": secret, "dialect": "codex"}):
        path = write(tmp_path / "s.json", json.dumps({"hooks": {"before_tool": [hook]}}))
        result = run_cli("validate", "--config", path)
        assert result.returncode == 2 and secret not in result.stderr


def test_same_message_without_jsonschema(tmp_path):
    """`python -S` has no site-packages, so no jsonschema: the built-in check answers the same."""
    path = write(tmp_path / "s.json", '{"hooks": {"before_tool": [{"command": "x", "timout_seconds": 3}]}}')
    with_lib = run_cli("validate", "--config", path)
    bare = subprocess.run([sys.executable, "-S", str(MAGIHOOK), "validate", "--config", path],
                          capture_output=True, text=True)
    assert with_lib.returncode == bare.returncode == 2
    assert with_lib.stderr == bare.stderr == (
        "magihook: %s: $.hooks.before_tool[0].timout_seconds: unknown key 'timout_seconds' "
        "(did you mean 'timeout_seconds'?)\n" % path)


# --- validate -----------------------------------------------------------------------------------

def test_validate_says_ok_and_how_the_file_was_found(tmp_path, isolated_env):
    path = write(tmp_path / "s.json", '{"hooks": {"enabled": true}}')
    assert run_cli("validate", "--config", path).stdout == "ok: %s (found by --config)\n" % path
    env = dict(os.environ, MAGIHOOK_CONFIG=path)
    assert run_cli("validate", env=env).stdout == "ok: %s (found by $MAGIHOOK_CONFIG)\n" % path
    project = tmp_path / "p"
    (project / ".magi-code").mkdir(parents=True)
    local = write(project / ".magi-code" / "settings.toml", "[hooks]\nenabled = true\n")
    assert run_cli("validate", cwd=project).stdout == "ok: %s (found by ./.magi-code/settings.toml)\n" % local
    (isolated_env / ".magi-code").mkdir()
    home = write(isolated_env / ".magi-code" / "settings.json", "{}")
    assert run_cli("validate", cwd=tmp_path).stdout == "ok: %s (found by ~/.magi-code/settings.json)\n" % home


def test_validate_with_no_file_anywhere_is_exit_2(tmp_path):
    result = run_cli("validate", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, (
        "magihook: no settings file found (looked at --config, $MAGIHOOK_CONFIG, "
        ".magi-code/ here and in the folders above, and ~/.magi-code/)\n"))


def test_shipped_example_settings_are_valid():
    result = run_cli("validate", "--config", str(EXAMPLES / "settings.json"))
    assert result.returncode == 0


# --- config: the effective settings -------------------------------------------------------------

SPARSE = {
    "model": "ignored",
    "hooks": {
        "enabled": True,
        "timeout_seconds": 7,
        "failure_policy": "fail",
        "before_tool": [{"label": "", "command": "./a.sh", "include_tools": ["shell"]}],
        "after_tool": [{"label": "b", "command": "./b.sh", "failure_policy": "ignore",
                        "stdout_max_bytes": 100}],
    },
}


def effective(config_output):
    """`config`'s document without its `settings_files` (which names the files it came from),
    in its order: what a settings file with the same meaning holds."""
    document = json.loads(config_output)
    document.pop("settings_files")
    return list(document.items())


def test_config_fills_every_default_and_inherited_value(tmp_path):
    path = write(tmp_path / "s.json", json.dumps(SPARSE))
    result = run_cli("config", "--config", path)
    assert result.returncode == 0
    document = json.loads(result.stdout)
    # Which file each hook came from (issue 26); the loader ignores this top-level key.
    assert document.pop("settings_files") == [{
        "layer": "explicit", "path": path, "found_by": "--config", "enabled": True,
        "trust": "not needed", "hooks": ["before_tool[0]", "after_tool[0]"]}]
    assert document == {
        "hooks": {
            "enabled": True, "show_in_tui": False,
            "injected_content": {"show_in_transcript": False, "show_in_activity_tree": False,
                                 "style": "content"},
            "payload": "redacted", "timeout_seconds": 7, "stdout_max_bytes": 8192,
            "stderr_max_bytes": 8192, "provider_context_injection": False,
            "provider_context_max_bytes": 4096, "failure_policy": "fail",
            "before_tool": [{
                "label": "hook", "command": "./a.sh", "payload": "redacted", "timeout_seconds": 7,
                "stdout_max_bytes": 8192, "stderr_max_bytes": 8192,
                "provider_context_injection": False, "provider_context_max_bytes": 4096,
                "failure_policy": "fail", "include_tools": ["bash"], "exclude_tools": [],
                "dialect": "magihook"}],
            "after_tool": [{
                "label": "b", "command": "./b.sh", "payload": "redacted", "timeout_seconds": 7,
                "stdout_max_bytes": 100, "stderr_max_bytes": 8192,
                "provider_context_injection": False, "provider_context_max_bytes": 4096,
                "failure_policy": "ignore", "include_tools": [], "exclude_tools": [],
                "dialect": "magihook"}],
            "after_assistant": [], "after_reasoning": [],
        },
        "tools": {"bash": {"absolute_paths": True}},
    }
    # The effective settings are themselves a valid settings file with the same meaning.
    again = write(tmp_path / "again.json", result.stdout)
    assert effective(run_cli("config", "--config", again).stdout) == list(document.items())


def test_config_without_any_file_shows_the_defaults(tmp_path):
    document = json.loads(run_cli("config", cwd=tmp_path).stdout)
    assert document.pop("settings_files") == []
    assert document["hooks"]["enabled"] is False
    assert document["hooks"]["before_tool"] == []
    assert document == magihook.settings_document(magihook.Settings())


def require_tomli_w():
    """tomli-w is a declared dependency (pyproject.toml): where it is missing, `--format toml`
    prints nothing and a comparison with the JSON would fail on a bare {}, saying nothing."""
    try:
        import tomli_w  # noqa: F401
    except ImportError:
        pytest.fail("the tomli-w package is not installed, and magihook declares it as a "
                    "dependency: pip install -e '.[test]'")


def test_json_and_toml_give_identical_effective_settings(tmp_path):
    require_tomli_w()
    json_path = write(tmp_path / "s.json", json.dumps(SPARSE))
    toml_text = run_cli("config", "--config", json_path, "--format", "toml").stdout
    assert tomllib.loads(toml_text) == json.loads(run_cli("config", "--config", json_path).stdout)
    toml_path = write(tmp_path / "s.toml", toml_text)
    from_toml = run_cli("config", "--config", toml_path)
    assert effective(from_toml.stdout) == effective(run_cli("config", "--config", json_path).stdout)
    hand_written = write(tmp_path / "hand.toml", (
        'model = "ignored"\n[hooks]\nenabled = true\ntimeout_seconds = 7\nfailure_policy = "fail"\n'
        '[[hooks.before_tool]]\nlabel = ""\ncommand = "./a.sh"\ninclude_tools = ["shell"]\n'
        '[[hooks.after_tool]]\nlabel = "b"\ncommand = "./b.sh"\nfailure_policy = "ignore"\n'
        "stdout_max_bytes = 100\n"))
    assert effective(run_cli("config", "--config", hand_written).stdout) == effective(
        run_cli("config", "--config", json_path).stdout)


def test_toml_output_without_tomli_w_names_the_package(tmp_path):
    """A real interpreter where tomli_w cannot be imported (no site, and blocked in sys.modules
    in case an installation put it on the standard path): one line that names the package."""
    json_path = write(tmp_path / "s.json", json.dumps(SPARSE))
    child = ("import sys; sys.modules['tomli_w'] = None; sys.path.insert(0, %r); "
             "import magihook; sys.exit(magihook.main(['config', '--config', %r, '--format', "
             "'toml']))" % (str(ROOT), json_path))
    done = subprocess.run([sys.executable, "-S", "-I", "-c", child], capture_output=True,
                          cwd=tmp_path, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, b"", b"magihook: --format toml needs the 'tomli-w' package (pip install tomli-w)\n")


def test_config_rejects_unknown_format(tmp_path):
    result = run_cli("config", "--format", "yaml", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (
        2, "magihook: --format must be json or toml (see magihook --help)\n")


# --- schema -------------------------------------------------------------------------------------

def test_schema_command_prints_schema_json():
    printed = json.loads(run_cli("schema").stdout)
    assert printed == json.loads((ROOT / "schema.json").read_text()) == magihook.SETTINGS_SCHEMA


def test_run_path_does_not_import_jsonschema_or_toml(tmp_path):
    path = write(tmp_path / "s.json", json.dumps(SPARSE))
    probe = (
        "import sys, io, runpy; sys.argv=['magihook','run','--phase','before_tool','--config',%r];"
        "sys.stdin=io.TextIOWrapper(io.BytesIO(b'{\"tool\":{\"name\":\"mcp\"},\"request\":{}}'));"
        "import magihook; code=magihook.main(); "
        "bad=[m for m in ('jsonschema','tomllib','tomli','tomli_w','argparse','difflib') if m in sys.modules "
        "and m not in PRE]; print(code, bad)" % path)
    done = subprocess.run([sys.executable, "-c", "import sys; PRE=set(sys.modules);" + probe],
                          capture_output=True, text=True, cwd=str(ROOT))
    assert done.stdout.strip().splitlines()[-1] == "0 []"


def test_runtime_defaults_are_the_schema_defaults():
    hooks = magihook.SETTINGS_SCHEMA["$defs"]["hooks"]["properties"]
    assert dict(magihook.HOOK_DEFAULTS) == {key: hooks[key]["default"] for key in magihook.HOOK_DEFAULTS}
    settings = magihook.Settings()
    assert {key: getattr(settings, key) for key in magihook.HOOK_DEFAULTS} == dict(magihook.HOOK_DEFAULTS)


@pytest.mark.parametrize("document, note", [
    ({"model": "x", "tools": {}}, "no 'hooks' key, so no hook runs"),
    ({"hooks": {"before_tool": [{"command": "./a.sh"}]}}, "hooks.enabled is not true, so no hook runs"),
    ({"hooks": {"enabled": True}}, None),
])
def test_validate_notes_settings_that_run_nothing(tmp_path, document, note):
    path = write(tmp_path / "s.json", json.dumps(document))
    result = run_cli("validate", "--config", path)
    assert (result.returncode, result.stdout) == (0, "ok: %s (found by --config)\n" % path)
    assert result.stderr == ("magihook: note: %s\n" % note if note else "")
