"""End-to-end: the real agent CLIs (pinned, from npm) against a loopback mock model.

These tests run only when MAGIHOOK_E2E=1 (``.ci/run`` sets it after the unit suite): they
install each agent into a cache folder the first time (hundreds of MB).  Without npm they skip
with a loud reason, except under CI=true, where a missing npm is a failure: CI must not skip.

Pinned versions (the newest npm served when they were last measured); run the same suite against
another release with MAGIHOOK_E2E_CLAUDE_CODE, MAGIHOOK_E2E_CODEX, MAGIHOOK_E2E_GEMINI,
MAGIHOOK_E2E_COPILOT and MAGIHOOK_E2E_QWEN (an npm version, or a tag such as ``latest``, which
npm is asked to resolve to a version on each run so a cached install of yesterday's ``latest``
is never reused).  The cache folder is
``$MAGIHOOK_E2E_CACHE`` (default ``~/.cache/magihook-e2e``, under the real HOME, read before the
unit fixtures replace HOME), one folder per package and version; npm installs with
``--prefer-offline``, so a version already in npm's own cache is not downloaded again.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, Tuple

import pytest

# agent -> (npm package, pinned version, binary name, override variable)
AGENTS: Dict[str, Tuple[str, str, str, str]] = {
    "claude-code": ("@anthropic-ai/claude-code", "2.1.332", "claude", "MAGIHOOK_E2E_CLAUDE_CODE"),
    "codex": ("@openai/codex", "0.171.0", "codex", "MAGIHOOK_E2E_CODEX"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini", "MAGIHOOK_E2E_GEMINI"),
    "copilot": ("@github/copilot", "1.0.102", "copilot", "MAGIHOOK_E2E_COPILOT"),
    "qwen": ("@qwen-code/qwen-code", "0.24.4", "qwen", "MAGIHOOK_E2E_QWEN"),
}

CACHE = Path(os.environ.get("MAGIHOOK_E2E_CACHE") or Path.home() / ".cache" / "magihook-e2e")
REAL_HOME = os.environ.get("HOME", "")


def _missing_tool(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail("e2e under CI cannot run: %s" % reason, pytrace=False)
    pytest.skip("E2E SKIPPED: %s" % reason)


def pytest_report_header(config):
    asked = ["%s %s%s" % (agent, os.environ.get(variable) or pinned,
                          "" if not os.environ.get(variable) else " (from %s)" % variable)
             for agent, (_, pinned, _, variable) in AGENTS.items()]
    return "e2e agents: " + ", ".join(asked)


@functools.cache
def agent_version(agent: str) -> str:
    """The release of `agent` this run drives: the pinned one, or the one its variable names
    (a tag is resolved by npm once per run)."""
    package, pinned, _, variable = AGENTS[agent]
    asked = os.environ.get(variable) or pinned
    if re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?", asked):
        return asked
    if shutil.which("npm") is None:
        _missing_tool("npm not on PATH (apt-get install nodejs npm)")
    done = subprocess.run(["npm", "view", "%s@%s" % (package, asked), "version"],
                          capture_output=True, text=True, timeout=120)
    lines = done.stdout.split()
    if done.returncode != 0 or not lines:
        _missing_tool("npm view %s@%s failed: %s" % (package, asked, done.stderr[-2000:]))
    return lines[-1].strip("'")  # a range lists `pkg@x 'x'` lines: the newest is last


def version_tuple(version: str) -> Tuple[int, ...]:
    """`2.1.332` -> (2, 1, 332), for "this release or older" checks (a pre-release suffix is
    dropped)."""
    return tuple(int(part) for part in re.findall(r"[0-9]+", version.split("-")[0]))


def install_agent(agent: str) -> Path:
    """The agent's CLI binary, installed from npm into the cache folder once per version."""
    package, _, binary, _ = AGENTS[agent]
    if shutil.which("npm") is None or shutil.which("node") is None:
        _missing_tool("npm/node not on PATH (apt-get install nodejs npm)")
    version = agent_version(agent)
    folder = CACHE / ("%s@%s" % (package.replace("/", "+"), version))
    path = folder / "node_modules" / ".bin" / binary
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            # engine-strict off whatever a user's npmrc says: Qwen Code 0.24 declares Node >= 22
            # and runs on the Node 20 CI has; a release that does not run fails its tests.
            ["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error",
             "--engine-strict=false", "--prefix", str(folder), "%s@%s" % (package, version)],
            capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not path.exists():
            _missing_tool("npm install %s@%s failed: %s" % (package, version, done.stderr[-2000:]))
    return path


@pytest.fixture(scope="session")
def agent_release():
    """``agent_release("claude-code")`` -> the driven release as a tuple, e.g. (2, 1, 332)."""
    return lambda agent: version_tuple(agent_version(agent))


@pytest.fixture(scope="session")
def agent_cli():
    """``agent_cli("codex")`` -> Path of the installed binary."""
    return install_agent
