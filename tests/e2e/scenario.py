"""Watch a magihook guard work in your own agent: one scenario, by hand.

    python tests/e2e/scenario.py claude-code block
    python tests/e2e/scenario.py codex warn
    python tests/e2e/scenario.py gemini allow --dir /tmp/try-magihook

It lays out a scratch project (`magihook init`'s guard, plus a `build/` folder to delete), a
scratch HOME wired exactly as `magihook adapt AGENT --print-settings` prints it, starts the
loopback mock model of the e2e suite (127.0.0.1 only: nothing leaves the machine, no API key is
needed), and prints the one command line that runs the agent against it.  Run that line in
another terminal, watch the agent, then press Ctrl-C here.  The scenarios:

    block   the model asks for `rm -rf build`: the init guard denies it, build/ stays
    allow   the model asks for `ls`: the guard lets it through
    warn    a guard that crashes (exit 1) under failure_policy warn: the call goes on, and the
            agent shows the user magihook's warning that it did

The agent is the e2e suite's cached one (tests/e2e/README.md) when it is there, else the one on
your PATH; `--agent PATH` names another.  Stdlib only, besides the e2e mocks beside this file.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

from mockmodel import MockModel

ROOT = Path(__file__).resolve().parents[2]
MAGIHOOK = ROOT / "magihook.py"
COMMANDS = {"block": "rm -rf build", "allow": "ls", "warn": "ls"}
CRASHING_GUARD = "#!/bin/sh\necho 'guard: crashed before it could judge the call' >&2\nexit 1\n"
# agent -> (npm package, binary) as the e2e suite's conftest installs it
AGENT_PACKAGES = {"claude-code": ("@anthropic-ai/claude-code", "claude"),
                  "codex": ("@openai/codex", "codex"), "gemini": ("@google/gemini-cli", "gemini")}


def magihook(*args: str, cwd: Path, env: Dict[str, str]) -> str:
    done = subprocess.run([sys.executable, str(MAGIHOOK)] + list(args), cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit("magihook %s failed: %s" % (" ".join(args), done.stderr.strip()))
    return done.stdout


def project_settings(folder: Path, scenario: str) -> Path:
    """A scratch project: the init guard (and, for `warn`, a crashing guard under warn) and a
    build/ folder.  Returns the settings file, named to the agent by --config."""
    home = folder / "home"
    project = folder / "project"
    for each in (home, project / "build"):
        each.mkdir(parents=True, exist_ok=True)
    (project / "build" / "keep.txt").write_text("still here\n")
    env = dict(os.environ, HOME=str(home))
    magihook("init", cwd=project, env=env)
    settings = project / ".magi-code" / "settings.json"
    if scenario == "warn":
        guard = project / "scripts" / "magi-hooks" / "crashing-guard.sh"
        guard.write_text(CRASHING_GUARD)
        guard.chmod(0o755)
        document = json.loads(settings.read_text())
        document["hooks"]["before_tool"] = [{"label": "crashing-guard", "command": str(guard),
                                             "failure_policy": "warn"}]
        settings.write_text(json.dumps(document, indent=2) + "\n")
    return settings


def agent_binary(agent: str, given: str) -> str:
    if given:
        return given
    package, binary = AGENT_PACKAGES[agent]
    cache = Path(os.environ.get("MAGIHOOK_E2E_CACHE") or Path.home() / ".cache" / "magihook-e2e")
    cached = sorted(cache.glob("%s@*/node_modules/.bin/%s" % (package.replace("/", "+"), binary)))
    return str(cached[-1]) if cached else binary


def claude_code(model: MockModel, folder: Path, settings: Path, binary: str
                ) -> Tuple[Dict[str, str], List[str]]:
    from claude_mock import ALLOWED_TOOLS, print_settings

    project = folder / "project"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(print_settings(settings), indent=2))
    env = {"HOME": str(folder / "home"), "ANTHROPIC_BASE_URL": model.url,
           "ANTHROPIC_API_KEY": "sk-ant-dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1"}
    return env, [binary, "-p", "go", "--allowedTools", ALLOWED_TOOLS]


def codex(model: MockModel, folder: Path, settings: Path, binary: str
          ) -> Tuple[Dict[str, str], List[str]]:
    from codex_mock import MODEL, _scratch

    env = _scratch(model, folder / "project", folder, settings)
    env.pop("PATH", None)  # the user's own PATH: this is their shell
    return env, [binary, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-"
                 "sandbox", "--dangerously-bypass-hook-trust", "-m", MODEL, "Do the task."]


def gemini(model: MockModel, folder: Path, settings: Path, binary: str
           ) -> Tuple[Dict[str, str], List[str]]:
    from gemini_mock import MODEL, GeminiRun

    run = GeminiRun(Path(binary), folder)
    run.wire()
    env = {"HOME": str(run.home), "GOOGLE_GEMINI_BASE_URL": model.url,
           "GEMINI_API_KEY": "test-key-not-real", "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    return env, [binary, "--approval-mode", "yolo", "-m", MODEL, "-p", "Do the task."]


def mock_model(agent: str, command: str) -> MockModel:
    """The e2e suite's mock for the agent, scripted to ask for one shell command."""
    if agent == "claude-code":
        from claude_mock import ClaudeModel
        return ClaudeModel([("Bash", {"command": command, "description": "scenario"})])
    if agent == "codex":
        from codex_mock import CodexModel, shell_call
        return CodexModel([[shell_call(command)]])
    from gemini_mock import GeminiModel
    return GeminiModel("run_shell_command", {"command": command, "description": "scenario"})


WIRING = {"claude-code": claude_code, "codex": codex, "gemini": gemini}


def tool_result_seen(agent: str, model: MockModel) -> str:
    """What the agent told the model the shell command gave (a deny's reason, or its output)."""
    if agent == "claude-code":
        from claude_mock import result_text, tool_results
        conversation = model.conversation()  # type: ignore[attr-defined]
        results = tool_results(conversation[-1].body) if conversation else []
        return result_text(results[0]) if results else ""
    if agent == "codex":
        return model.tool_output("call_shell_1") or ""  # type: ignore[attr-defined]
    from gemini_mock import function_responses
    request = model.after_tool()  # type: ignore[attr-defined]
    return json.dumps(function_responses(request)) if request is not None else ""


def command_line(project: Path, env: Dict[str, str], argv: List[str]) -> str:
    assignments = " ".join(shlex.quote("%s=%s" % item) for item in sorted(env.items()))
    return "cd %s && env %s %s" % (shlex.quote(str(project)), assignments,
                                   " ".join(shlex.quote(word) for word in argv))


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("agent", choices=sorted(WIRING))
    parser.add_argument("scenario", choices=sorted(COMMANDS))
    parser.add_argument("--dir", help="the scratch folder (default: a new temporary one)")
    parser.add_argument("--agent", dest="binary", default="", help="the agent's binary")
    parser.add_argument("--serve-seconds", type=float, default=0,
                        help="stop serving after this many seconds (default: until Ctrl-C)")
    options = parser.parse_args(argv)
    folder = Path(options.dir or tempfile.mkdtemp(prefix="magihook-scenario-")).resolve()
    settings = project_settings(folder, options.scenario)
    with mock_model(options.agent, COMMANDS[options.scenario]) as model:
        env, agent_argv = WIRING[options.agent](model, folder, settings,
                                                agent_binary(options.agent, options.binary))
        print("# scenario %s in %s: the model asks for `%s`" % (
            options.scenario, options.agent, COMMANDS[options.scenario]))
        print("# magihook settings: %s" % settings)
        print("# run this in another terminal (the mock model serves at %s):" % model.url)
        print(command_line(folder / "project", env, agent_argv), flush=True)
        try:
            if options.serve_seconds:
                time.sleep(options.serve_seconds)
            else:
                while True:
                    time.sleep(3600)
        except KeyboardInterrupt:
            pass
        seen = tool_result_seen(options.agent, model)
        print("\n# the model was told: %s" % (seen[:500] if seen else "(the agent never ran it)"))
        print("# build/ %s" % ("is still there" if (folder / "project" / "build").exists()
                                else "is gone"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
