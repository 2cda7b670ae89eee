"""Realistic generated text for the credential-scanning benchmark.

What a redaction scanner really sees in tool requests, results and messages: JSON, shell env
exports, `key=value` log lines, URLs, YAML, source code, lock files, git logs and prose.  Many
lines carry credential-looking *keys* (`token_count`, `DB_PASSWORD=${DB_PASSWORD:-}`,
`secretKeyRef`) and random-looking *values* (hashes, UUIDs, request ids, base64 integrity
digests) that are not secrets: that is what makes a scanner slow or wrong.

`with_secrets()` splices generated, credential-shaped values (random at every run, never a real
key) into such text.  Everything is seeded, so a size and seed give the same text every time.
"""

from __future__ import annotations

import base64
import json
import random
import string
from typing import Callable, Dict, List, Tuple

MIB = 1024 * 1024
ALNUM = string.ascii_letters + string.digits
WORDS = ("build", "deploy", "user", "items", "cache", "server", "index", "config", "report",
         "worker", "queue", "status", "render", "module", "client", "session", "token",
         "keyboard", "author", "password", "secret", "key", "auth", "billing", "search")


def _hex(rng: random.Random, digits: int) -> str:
    return "%0*x" % (digits, rng.getrandbits(digits * 4))


def _uuid(rng: random.Random) -> str:
    h = _hex(rng, 32)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def _chars(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choices(alphabet, k=count))


def _word(rng: random.Random) -> str:
    return rng.choice(WORDS)


def json_text(rng: random.Random) -> str:
    return json.dumps({
        "type": "tool_use", "id": "toolu_" + _chars(rng, ALNUM, 24), "name": "bash",
        "input": {"command": "ls -la /srv/%s/%s" % (_word(rng), _word(rng)),
                  "timeout": rng.randint(1, 600)},
        "usage": {"input_tokens": rng.randint(1, 99999), "output_tokens": rng.randint(1, 9999),
                  "max_tokens": 4096, "cache_read_input_tokens": rng.randint(0, 9999)},
        "session_id": _uuid(rng), "message_id": "msg_" + _chars(rng, ALNUM, 24),
        "etag": _hex(rng, 32), "token_type": "bearer", "password_policy": {"min_length": 12},
        "model": "gpt-5", "stop_reason": "tool_use",
    }) + "\n"


def env_text(rng: random.Random) -> str:
    return rng.choice((
        "export PATH=/usr/local/bin:/usr/bin:/bin:/home/dev/.local/bin:/home/dev/go/bin\n",
        "export NODE_ENV=production NODE_OPTIONS=--max-old-space-size=%d\n" % rng.randint(1, 9999),
        "export DB_PASSWORD=${DB_PASSWORD:-}\n",
        "export API_KEY=\"$API_KEY\" AUTH_MODE=oauth TOKEN_TTL=%d\n" % rng.randint(60, 86400),
        "export LANG=en_US.UTF-8 LC_ALL=en_US.UTF-8 TZ=UTC\n",
        "DATABASE_HOST=db.internal DATABASE_PORT=5432 DATABASE_NAME=%s\n" % _word(rng),
        "GIT_COMMIT=%s BUILD_ID=%s\n" % (_hex(rng, 40), _uuid(rng)),
    ))


def log_text(rng: random.Random) -> str:
    return ("ts=2025-%02d-%02dT12:%02d:%02d.%03dZ level=%s msg=\"request done\" request_id=%s "
            "trace_id=%s path=/api/v1/%s/%d status=%d duration_ms=%d token_count=%d user=%s "
            "ip=10.%d.%d.%d ua=\"Mozilla/5.0 (X11; Linux x86_64)\"\n" % (
                rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 59), rng.randint(0, 59),
                rng.randint(0, 999), rng.choice(("info", "warn", "debug")), _uuid(rng),
                _hex(rng, 32), _word(rng), rng.randint(1, 99999),
                rng.choice((200, 201, 204, 401, 404, 500)), rng.randint(1, 999),
                rng.randint(1, 5000), _word(rng), rng.randint(0, 255), rng.randint(0, 255),
                rng.randint(0, 255)))


def url_text(rng: random.Random) -> str:
    return ("https://github.com/acme/%s/blob/%s/src/%s.py?plain=1#L%d "
            "https://registry.npmjs.org/%s/-/%s-1.%d.%d.tgz "
            "https://example.com/callback?state=%s&session_state=%s&utm_source=%s\n" % (
                _word(rng), _hex(rng, 40), _word(rng), rng.randint(1, 999), _word(rng),
                _word(rng), rng.randint(0, 9), rng.randint(0, 20), _chars(rng, ALNUM, 16),
                _uuid(rng), _word(rng)))


def yaml_text(rng: random.Random) -> str:
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  labels:\n"
            "    app: %s\nspec:\n  replicas: %d\n  template:\n    spec:\n      containers:\n"
            "      - name: web\n        image: nginx@sha256:%s\n        env:\n"
            "        - name: DB_PASSWORD\n          valueFrom:\n"
            "            secretKeyRef: {name: db, key: password}\n"
            "        - name: GITHUB_TOKEN\n          value: ${{ secrets.GITHUB_TOKEN }}\n"
            "        - name: TOKEN_LIMIT\n          value: \"%d\"\n" % (
                _word(rng), _word(rng), rng.randint(1, 9), _hex(rng, 64), rng.randint(1, 999)))


def code_text(rng: random.Random) -> str:
    return ("def get_token(self, session):\n    token = self._cache.get(session.key)\n"
            "    if token is None:\n        token = self.refresh(session)\n    return token\n\n"
            "class PasswordField(Field):\n    max_length = %d\n\n"
            "    def validate(self, password: str) -> str:\n"
            "        if password is None or len(password) < 8:\n"
            "            raise ValueError('password too short')\n"
            "        return hashlib.sha256(password.encode()).hexdigest()\n\n"
            "const apiKey = process.env.API_KEY;\n"
            "const headers = { Authorization: `Bearer ${apiKey}`, 'X-Request-Id': '%s' };\n"
            "for (const [key, value] of Object.entries(secrets)) { console.log(key, value.length); }\n"
            % (rng.randint(8, 256), _uuid(rng)))


def lock_text(rng: random.Random) -> str:
    digest = base64.b64encode(rng.getrandbits(512).to_bytes(64, "big")).decode()
    return ('    "node_modules/%s": {"version": "1.%d.%d", "resolved": '
            '"https://registry.npmjs.org/%s/-/%s-1.0.0.tgz", "integrity": "sha512-%s"},\n' % (
                _word(rng), rng.randint(0, 9), rng.randint(0, 9), _word(rng), _word(rng), digest))


def git_text(rng: random.Random) -> str:
    return ("commit %s\nAuthor: Dev <dev@example.com>\nDate:   Mon Jan 6 12:00:00 2025 +0000\n\n"
            "    fix(%s): rotate %s handling, see #%d\n\n" % (
                _hex(rng, 40), _word(rng), _word(rng), rng.randint(1, 9999)))


def prose_text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS + ("the", "was", "and", "then", "we", "it", "a", "of"))
                    for _ in range(16)).capitalize() + ".\n"


def unicode_text(rng: random.Random) -> str:
    # Markdown and chat prose with a few non-ASCII characters: one em dash makes str.lower()
    # of the whole text many times slower than on ASCII.
    words = " ".join(rng.choice(WORDS + ("the", "was", "and", "then", "we", "it", "a", "of"))
                     for _ in range(12))
    return rng.choice((
        "- %s \u2014 see \u201cnotes\u201d.\n" % words,
        "%s\u2026 done in %d ms (caf\u00e9, na\u00efve) \u2713\n" % (words, rng.randint(1, 999)),
        "## %s \u00b7 build \u2192 deploy\n" % words,
        "%s.\n" % words.capitalize(),
    ))


def base64_text(rng: random.Random) -> str:
    # Base64 blobs: certificate bodies, data: URIs, Kubernetes binaryData, wrapped at 76.
    blob = base64.b64encode(rng.getrandbits(8 * 456).to_bytes(456, "big")).decode()
    lines = [blob[i:i + 76] for i in range(0, len(blob), 76)]
    return rng.choice((
        "-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n" % "\n".join(lines),
        '<img src="data:image/png;base64,%s">\n' % blob,
        "binaryData:\n  logo.png: %s\n" % blob,
    ))


KINDS: Dict[str, Callable[[random.Random], str]] = {
    "json": json_text, "env": env_text, "log": log_text, "url": url_text, "yaml": yaml_text,
    "code": code_text, "lockfile": lock_text, "git": git_text, "prose": prose_text,
    "unicode": unicode_text, "base64": base64_text,
}


def text(kind: str, size: int, seed: int = 1) -> str:
    """`size` characters of one kind, or of every kind mixed (`"mixed"`); ASCII (so bytes) but
    for the "unicode" kind."""
    rng = random.Random(seed)
    makers = list(KINDS.values()) if kind == "mixed" else [KINDS[kind]]
    parts: List[str] = []
    total = 0
    while total < size:
        piece = rng.choice(makers)(rng)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


# Credential-shaped values, random every time: the shapes gitleaks-style rules look for.
SECRET_SHAPES: Tuple[Callable[[random.Random], str], ...] = (
    lambda rng: "export GITHUB_TOKEN=ghp_" + _chars(rng, ALNUM, 36),
    lambda rng: "aws_access_key_id = AKIA" + _chars(rng, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    lambda rng: "aws_secret_access_key = " + _chars(rng, ALNUM + "+/", 40),
    lambda rng: "SLACK_BOT_TOKEN=xoxb-%d-%d-%s" % (
        rng.randint(10 ** 10, 10 ** 11), rng.randint(10 ** 10, 10 ** 11), _chars(rng, ALNUM, 24)),
    lambda rng: '"api_key": "sk_live_%s"' % _chars(rng, ALNUM, 24),
    lambda rng: "Authorization: Bearer " + _chars(rng, ALNUM + "-._", 48),
    lambda rng: "DATABASE_URL=postgres://app:%s@db.internal:5432/app" % _chars(rng, ALNUM, 20),
    lambda rng: "password = \"%s\"" % _chars(rng, ALNUM + "!#%&*", 18),
    lambda rng: "jwt=eyJ%s.eyJ%s.%s" % (_chars(rng, ALNUM, 30), _chars(rng, ALNUM, 60),
                                       _chars(rng, ALNUM + "-_", 43)),
    lambda rng: "-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----" % "\n".join(
        _chars(rng, ALNUM + "+/", 64) for _ in range(6)),
)


def with_secrets(base: str, every: int = 2048, seed: int = 2) -> Tuple[str, List[str]]:
    """`base` with a credential line spliced in after every `every` characters (at a line end).

    Returns the text and the secret lines, so a caller can check which survived redaction.
    """
    rng = random.Random(seed)
    parts: List[str] = []
    secrets: List[str] = []
    position = 0
    while position < len(base):
        cut = base.find("\n", position + every)
        cut = len(base) if cut < 0 else cut + 1
        parts.append(base[position:cut])
        secret = rng.choice(SECRET_SHAPES)(rng)
        secrets.append(secret)
        parts.append(secret + "\n")
        position = cut
    return "".join(parts), secrets
