"""Throughput of magihook.redact_credentials.

Usage: python3 bench_redact.py [--quick]

Measures MB/s (10^6 characters per CPU second of this process, via
time.process_time, so other load on a shared machine does not skew it; the
text is ASCII, so bytes == chars) on
realistic text without secrets, per kind and mixed, then the time for 1, 4
and 16 MiB of mixed text with secrets sprinkled in (linearity check).
"""
import hashlib
import json
import os
import random
import string
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import magihook  # noqa: E402

MIB = 1024 * 1024


def _hex(rng, n):
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _uuid(rng):
    h = _hex(rng, 32)
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def _word(rng):
    return rng.choice(["build", "deploy", "user", "items", "cache", "server", "index",
                       "config", "report", "worker", "queue", "status", "render",
                       "module", "client", "session", "token", "keyboard", "author"])


def json_line(rng):
    return json.dumps({
        "type": "tool_use", "id": "toolu_" + _hex(rng, 24), "name": "bash",
        "input": {"command": "ls -la /srv/%s/%s" % (_word(rng), _word(rng)),
                  "timeout": rng.randint(1, 600)},
        "usage": {"input_tokens": rng.randint(1, 9999), "output_tokens": rng.randint(1, 999),
                  "max_tokens": 4096, "cache_read_input_tokens": 0},
        "session_id": _uuid(rng), "message_id": "msg_" + _hex(rng, 20),
        "model": "gpt-5", "stop_reason": "tool_use",
    }) + "\n"


def env_line(rng):
    return rng.choice([
        "export PATH=/usr/local/bin:/usr/bin:/bin:/home/dev/.local/bin\n",
        "export NODE_ENV=production\n",
        "export GOPATH=$HOME/go GOFLAGS=-mod=mod\n",
        "export DB_PASSWORD=${DB_PASSWORD:-}\n",
        "export API_KEY=$API_KEY\n",
        "export LANG=en_US.UTF-8 LC_ALL=en_US.UTF-8\n",
        "export MAX_TOKENS=%d TOKEN_COUNT=%d\n" % (rng.randint(1, 9999), rng.randint(1, 99)),
        "DATABASE_HOST=db.internal DATABASE_PORT=5432 DATABASE_NAME=%s\n" % _word(rng),
    ])


def log_line(rng):
    return ("ts=2025-%02d-%02dT12:%02d:%02dZ level=info msg=\"request done\" request_id=%s "
            "path=/api/v1/%s/%d status=%d duration_ms=%d token_count=%d user=%s\n" % (
                rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 59), rng.randint(0, 59),
                _uuid(rng), _word(rng), rng.randint(1, 99999), rng.choice([200, 201, 404, 500]),
                rng.randint(1, 999), rng.randint(1, 5000), _word(rng)))


def url_line(rng):
    return "https://github.com/acme/%s/blob/%s/src/%s.py?ref=main#L%d https://registry.npmjs.org/%s/-/%s-1.%d.%d.tgz\n" % (
        _word(rng), _hex(rng, 40), _word(rng), rng.randint(1, 999), _word(rng), _word(rng),
        rng.randint(0, 9), rng.randint(0, 20))


def yaml_block(rng):
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  labels:\n    app: %s\n"
            "spec:\n  replicas: %d\n  template:\n    spec:\n      containers:\n      - name: web\n"
            "        image: nginx@sha256:%s\n        env:\n        - name: DB_PASSWORD\n"
            "          valueFrom:\n            secretKeyRef: {name: db, key: password}\n"
            "        - name: TOKEN_LIMIT\n          value: \"%d\"\n" % (
                _word(rng), _word(rng), rng.randint(1, 9), _hex(rng, 64), rng.randint(1, 999)))


def code_block(rng):
    return ("def get_token(self, session):\n    token = self._cache.get(session.key)\n"
            "    if token is None:\n        token = self.refresh(session)\n    return token\n\n"
            "class PasswordField(Field):\n    max_length = %d\n    def validate(self, password):\n"
            "        if password is None or len(password) < 8:\n            raise ValueError('too short')\n"
            "        return hashlib.sha256(password.encode()).hexdigest()\n\n"
            "const apiKey = process.env.API_KEY;\nconst headers = { Authorization: `Bearer ${apiKey}` };\n"
            "for (const [key, value] of Object.entries(obj)) { console.log(key, value); }\n" % rng.randint(8, 256))


def lock_line(rng):
    blob = hashlib.sha512(_hex(rng, 16).encode()).digest()
    import base64
    return ('    "node_modules/%s": {"version": "1.%d.%d", "resolved": "https://registry.npmjs.org/%s/-/%s-1.0.0.tgz", '
            '"integrity": "sha512-%s"},\n' % (_word(rng), rng.randint(0, 9), rng.randint(0, 9), _word(rng),
                                                _word(rng), base64.b64encode(blob).decode()))


def git_line(rng):
    return "commit %s\nAuthor: Dev <dev@example.com>\nDate:   Mon Jan 1 12:00:00 2025\n\n    fix: %s %s\n\n" % (
        _hex(rng, 40), _word(rng), _word(rng))


def prose_line(rng):
    return " ".join(rng.choice(["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog",
                                "passed", "author", "keyboard", "session", "tokens", "were",
                                "counted", "and", "then", "we", "deployed", "it"])
                    for _ in range(14)) + ".\n"


KINDS = {"json": json_line, "env": env_line, "log": log_line, "url": url_line,
         "yaml": yaml_block, "code": code_block, "lockfile": lock_line, "git": git_line,
         "prose": prose_line}


def make_text(kind, size, seed=1):
    rng = random.Random(seed)
    makers = list(KINDS.values()) if kind == "mixed" else [KINDS[kind]]
    parts, total = [], 0
    while total < size:
        piece = rng.choice(makers)(rng)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)[:size]


def sprinkle_secrets(text, every, seed=2):
    rng = random.Random(seed)
    alnum = string.ascii_letters + string.digits
    secrets = [
        lambda: "export GITHUB_TOKEN=ghp_" + "".join(rng.choice(alnum) for _ in range(36)),
        lambda: "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16)),
        lambda: '"api_key": "%s"' % "".join(rng.choice(alnum) for _ in range(32)),
        lambda: "postgres://app:%s@db:5432/x" % "".join(rng.choice(alnum) for _ in range(16)),
    ]
    out, pos = [], 0
    while pos < len(text):
        out.append(text[pos:pos + every])
        out.append(" " + rng.choice(secrets)() + "\n")
        pos += every
    return "".join(out)


def rate(text, repeat=5):
    best = None
    for _ in range(repeat):
        start = time.process_time()
        magihook.redact_credentials(text)
        elapsed = time.process_time() - start
        best = elapsed if best is None else min(best, elapsed)
    return len(text) / best / 1e6, best


def main():
    quick = "--quick" in sys.argv
    size = 2 * MIB if quick else 4 * MIB
    print("no secrets (%d MiB each, best of 5):" % (size // MIB))
    for kind in list(KINDS) + ["mixed"]:
        text = make_text(kind, size)
        changed = magihook.redact_credentials(text) != text
        mbs, _ = rate(text)
        print("  %-9s %7.1f MB/s%s" % (kind, mbs, "  (CHANGED!)" if changed else ""))
    print("with secrets (one every ~2 KiB, mixed text):")
    for mib in (1, 4, 16):
        text = sprinkle_secrets(make_text("mixed", mib * MIB), 2048)
        mbs, best = rate(text, repeat=2 if mib == 16 else 5)
        print("  %2d MiB  %6.3f s  %7.1f MB/s" % (mib, best, mbs))


if __name__ == "__main__":
    main()
