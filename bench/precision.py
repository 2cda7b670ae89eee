"""Redactions per MiB of ordinary tool output (bench/precision_corpus.py), beside detect-secrets.

    python3 bench/precision_corpus.py                        # build the corpus once
    python3 bench/precision.py [--spans N] [--kind KIND] [--module PATH]
    bench/.venv-ds/bin/python bench/precision.py --detect-secrets [--ds-mib 0.5]

The corpus holds no secret, so every redaction is a false positive to judge.  For each kind:
MiB, items, items changed, redactions (each `<redacted:credential>` that magihook's
redact_credentials puts in an item) and redactions per MiB.  --spans N prints N spans drawn at
random (seeded) with their line, so a person can judge each.  --detect-secrets adds detect-secrets'
findings per MiB (default plugins and filters, `scan_file`) on the first --ds-mib of each kind
(it is slow: a whole run would take hours); install it as bench/compare_detect_secrets.py says.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import sys
import tempfile
import time
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MIB = 1024 * 1024


def load_module(path: str):
    spec = importlib.util.spec_from_file_location("magihook_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_corpus(folder: str, only: str = "") -> Dict[str, List[dict]]:
    kinds: Dict[str, List[dict]] = {}
    for name in sorted(os.listdir(folder)):
        kind = name[:-len(".jsonl")]
        if name.endswith(".jsonl") and (not only or kind == only):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                kinds[kind] = [json.loads(line) for line in f if line.strip()]
    if not kinds:
        sys.exit("no corpus in %s: run bench/precision_corpus.py first" % folder)
    return kinds


def redacted_spans(original: str, redacted: str, marker: str) -> List[Tuple[int, int]]:
    """Where in `original` each marker of `redacted` stands: the text between markers is kept
    verbatim, so each piece is found in order and what lies between two pieces was replaced."""
    pieces = redacted.split(marker)
    spans = []
    pos = len(pieces[0])
    for number, piece in enumerate(pieces[1:], 1):
        if number == len(pieces) - 1:
            end = len(original) - len(piece)  # the last piece ends the text
        else:
            end = original.find(piece, pos + 1) if piece else pos + 1
        end = max(end, pos)
        spans.append((pos, end))
        pos = end + len(piece)
    return spans


def measure(module, kinds: Dict[str, List[dict]]) -> Tuple[Dict[str, dict], List[tuple]]:
    marker = module.REDACTION_MARKER
    rows: Dict[str, dict] = {}
    found = []
    for kind, items in kinds.items():
        size = changed = count = 0
        cpu = 0.0
        for item in items:
            text = item["text"]
            size += len(text.encode("utf-8"))
            start = time.process_time()
            out = module.redact_credentials(text)
            cpu += time.process_time() - start
            if out == text:
                continue
            changed += 1
            before = text.count(marker)
            spans = redacted_spans(text, out, marker)
            count += len(spans) - before
            found.extend((kind, item["source"], text, span) for span in spans)
        rows[kind] = {"mib": size / MIB, "items": len(items), "changed": changed, "redactions": count,
                      "per_mib": count / (size / MIB) if size else 0.0, "cpu": cpu}
    return rows, found


def detect_secrets_rows(kinds: Dict[str, List[dict]], mib: float) -> Dict[str, dict]:
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings
    rows = {}
    with default_settings(), tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sample.txt")
        for kind, items in kinds.items():
            size = count = changed = 0
            for item in items:
                if size >= mib * MIB:
                    break
                with open(path, "w", encoding="utf-8") as f:
                    f.write(item["text"])
                size += len(item["text"].encode("utf-8"))
                hits = len(list(scan_file(path)))
                count += hits
                changed += bool(hits)
            rows[kind] = {"mib": size / MIB, "findings": count, "changed": changed,
                          "per_mib": count / (size / MIB) if size else 0.0}
    return rows


def print_table(rows: Dict[str, dict], ds: Dict[str, dict]) -> None:
    head = "%-12s %7s %6s %8s %10s %8s" % ("kind", "MiB", "items", "changed", "redactions", "per MiB")
    if ds:
        head += "   %s" % "detect-secrets: MiB scanned, findings, per MiB"
    print(head)
    total = {"mib": 0.0, "items": 0, "changed": 0, "redactions": 0, "cpu": 0.0}
    for kind, row in rows.items():
        line = "%-12s %7.2f %6d %8d %10d %8.2f" % (kind, row["mib"], row["items"], row["changed"],
                                                   row["redactions"], row["per_mib"])
        if kind in ds:
            d = ds[kind]
            line += "   %5.2f %6d %8.1f" % (d["mib"], d["findings"], d["per_mib"])
        print(line)
        for key in total:
            total[key] += row[key]
    print("%-12s %7.2f %6d %8d %10d %8.2f" % ("all", total["mib"], total["items"], total["changed"],
                                              total["redactions"], total["redactions"] / total["mib"]))
    print("items changed: %.2f %%; magihook CPU %.1f s (%.1f MiB/s)" % (
        100.0 * total["changed"] / total["items"], total["cpu"], total["mib"] / max(total["cpu"], 1e-9)))


def print_spans(found: List[tuple], count: int, seed: int) -> None:
    rng = random.Random(seed)
    picked = found if len(found) <= count else rng.sample(found, count)
    for kind, source, text, (start, end) in sorted(picked, key=lambda f: (f[0], f[1])):
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        line = text[max(line_start, start - 100):start] + "[[" + text[start:end] + "]]" + text[end:min(line_end, end + 80)]
        print("%-11s %-45s %s" % (kind, source[-45:], line.replace("\t", " ")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=os.path.join(HERE, "precision-corpus"))
    parser.add_argument("--module", default=os.path.join(ROOT, "magihook.py"))
    parser.add_argument("--kind", default="")
    parser.add_argument("--spans", type=int, default=0, help="print N redacted spans drawn at random")
    parser.add_argument("--all-spans", action="store_true", help="print every redacted span")
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--detect-secrets", action="store_true")
    parser.add_argument("--ds-mib", type=float, default=0.5)
    args = parser.parse_args()
    kinds = load_corpus(args.corpus, args.kind)
    rows, found = measure(load_module(args.module), kinds)
    ds = detect_secrets_rows(kinds, args.ds_mib) if args.detect_secrets else {}
    print_table(rows, ds)
    if args.spans or args.all_spans:
        print()
        print_spans(found, len(found) if args.all_spans else args.spans, args.seed)


if __name__ == "__main__":
    main()
