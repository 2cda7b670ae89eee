"""magihook's redaction beside detect-secrets on the same corpus (tests/data).

detect-secrets is not a dependency: install it into a venv of its own here and run this with it:

    python3 -m venv bench/.venv-ds && bench/.venv-ds/bin/pip install detect-secrets==1.5.0
    bench/.venv-ds/bin/python bench/compare_detect_secrets.py [--by-format]
    bench/.venv-ds/bin/python bench/compare_detect_secrets.py --speed     # MB/s on each corpus kind

Each corpus text is written to a file of its own (sample.txt) and scanned as a file with
detect-secrets' default plugins and filters (`scan_file` under `default_settings`).  A positive
counts as caught by detect-secrets when one of its findings on the text holds the secret, or is
part of it of at least 8 characters (or the whole secret when shorter); by magihook when the
secret is no longer in redact_credentials' output.  A look-alike is kept by detect-secrets when
it reports nothing, by magihook when the text comes back byte for byte.

--speed: MB (10^6 bytes of UTF-8) of CPU a second on 256 KiB of each bench/corpus.py kind, best of
3: magihook's redact_credentials on the string (after one call that compiles its patterns), and
detect-secrets' scan_file on the same text in a file.
"""
import json
import os
import sys
import tempfile
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from detect_secrets.core.scan import scan_file  # noqa: E402
from detect_secrets.settings import default_settings  # noqa: E402

import magihook  # noqa: E402


def _load(name):
    with open(os.path.join(ROOT, "tests", "data", name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _findings(folder, text):
    path = os.path.join(folder, "sample.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return [s.secret_value or "" for s in scan_file(path)]


def _caught(secret, values):
    need = min(len(secret), 8)
    return any(secret in v or (len(v) >= need and v in secret) for v in values)


def _family(fmt):
    return fmt.split(":")[0]


def _best_cpu(function, *args, rounds=3):
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        function(*args)
        best = min(best, time.process_time() - start)
    return max(best, 1e-9)


def speed(size=256 * 1024):
    sys.path.insert(0, HERE)
    import corpus
    print("| kind | magihook MB/s | detect-secrets MB/s | magihook / detect-secrets |")
    print("| --- | ---: | ---: | ---: |")
    with default_settings(), tempfile.TemporaryDirectory() as folder:
        for kind in list(corpus.KINDS) + ["mixed"]:
            text = corpus.text(kind, size)
            megabytes = len(text.encode("utf-8")) / 1e6
            magihook.redact_credentials(text)
            ours = megabytes / _best_cpu(magihook.redact_credentials, text)
            theirs = megabytes / _best_cpu(_findings, folder, text)
            print("| %s | %.1f | %.2f | %.0f |" % (kind, ours, theirs, ours / theirs))

def main():
    if "--speed" in sys.argv:
        speed()
        return
    by_format = "--by-format" in sys.argv
    positives, negatives = _load("secrets_positive.jsonl"), _load("secrets_negative.jsonl")
    rows = defaultdict(lambda: [0, 0, 0])        # family -> [total, magihook, detect-secrets]
    ds_cpu = mh_cpu = 0.0
    kept = [0, 0]
    with default_settings(), tempfile.TemporaryDirectory() as folder:
        for row in positives:
            start = time.process_time()
            values = _findings(folder, row["text"])
            ds_cpu += time.process_time() - start
            start = time.process_time()
            out = magihook.redact_credentials(row["text"])
            mh_cpu += time.process_time() - start
            counts = rows[_family(row["format"]) if by_format else "all"]
            counts[0] += 1
            counts[1] += row["secret"] not in out
            counts[2] += _caught(row["secret"], values)
        for row in negatives:
            kept[0] += magihook.redact_credentials(row["text"]) == row["text"]
            kept[1] += not _findings(folder, row["text"])
    total = len(positives)
    print("corpus: %d positives, %d look-alikes" % (total, len(negatives)))
    print("| scanner | recall | look-alikes kept |")
    print("| --- | --- | --- |")
    print("| magihook %s | %.1f%% (%d/%d) | %.1f%% (%d/%d) |" % (
        magihook.__version__, 100.0 * sum(r[1] for r in rows.values()) / total,
        sum(r[1] for r in rows.values()), total, 100.0 * kept[0] / len(negatives), kept[0], len(negatives)))
    print("| detect-secrets 1.5.0 | %.1f%% (%d/%d) | %.1f%% (%d/%d) |" % (
        100.0 * sum(r[2] for r in rows.values()) / total, sum(r[2] for r in rows.values()), total,
        100.0 * kept[1] / len(negatives), kept[1], len(negatives)))
    print("CPU time on the positives: magihook %.3f s, detect-secrets %.3f s (file writes included)"
          % (mh_cpu, ds_cpu))
    if by_format:
        print("\n| format | rows | magihook | detect-secrets |\n| --- | --- | --- | --- |")
        for family, (n, mh, ds) in sorted(rows.items()):
            print("| %s | %d | %d | %d |" % (family, n, mh, ds))


if __name__ == "__main__":
    main()
