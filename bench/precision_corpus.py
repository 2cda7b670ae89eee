"""Build a corpus of ordinary tool output that holds no secret, for measuring false positives.

What a coding agent's tools print on an ordinary day: git logs and patches, lockfiles, source in
several languages, CI workflows, Kubernetes manifests, minified JS and source maps, AWS CLI JSON,
`dpkg -l` / `ls -l` / pytest output, syntax-highlighting grammars, npm scripts, git config.  Nothing
third-party is committed: this script builds the corpus on the machine from

- repositories brought here by the search tool's `fetch` (bare git mirrors under /work/.mirror,
  or any folder given with --mirrors): read with `git log -p` / `git show`;
- packages installed on the machine (site-packages, /usr/share, npm's own tree);
- commands run here (`dpkg -l`, `ls -l`, pytest on generated tests);
- seeded generators for shapes no installed file has (AWS CLI answers with pagination and
  idempotency tokens, account ids and ARNs; `git config --list`; a Kubernetes Secret's
  non-secret fields; workflows with `permissions: id-token: write`; sudoers lines).

    python3 bench/precision_corpus.py [--out bench/precision-corpus] [--mib-per-kind 3]

Writes OUT/KIND.jsonl, one item a line: {"kind", "source", "text"}; an item is one tool output,
at most 32 KiB (longer outputs are cut at line ends into several items).  bench/precision.py
measures redactions on it.  The folder is .gitignored.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import random
import string
import subprocess
import sys
import tempfile
from typing import Callable, Dict, Iterator, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ITEM_MAX = 32 * 1024
MIB = 1024 * 1024
SITE = os.path.dirname(os.path.dirname(json.__file__)) + "/site-packages"
if not os.path.isdir(SITE):
    import site
    SITE = site.getsitepackages()[0]

# Repositories fetched with the search tool; each brings several kinds.
REPOS = {
    "petclinic": "spring-projects+spring-petclinic",
    "axios": "axios+axios",
    "cobra": "spf13+cobra",
    "ripgrep": "BurntSushi+ripgrep",
    "poetry": "python-poetry+poetry",
    "k8s": "kubernetes+examples",
}
SOURCE_EXTENSIONS = (".java", ".js", ".ts", ".go", ".rs", ".py", ".sh", ".c", ".rb")


def _run(argv: List[str], cwd: str = None) -> str:
    try:
        out = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.decode("utf-8", "replace")


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(4 * MIB)
    except OSError:
        return ""
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    if b"\0" in data[:8192]:
        return ""
    return data.decode("utf-8", "replace")


def chunks(text: str) -> Iterator[str]:
    """Cut a long output at line ends into items of at most ITEM_MAX characters."""
    while text:
        if len(text) <= ITEM_MAX:
            yield text
            return
        cut = text.rfind("\n", 0, ITEM_MAX) + 1 or ITEM_MAX
        yield text[:cut]
        text = text[cut:]


class Mirror:
    def __init__(self, folder: str) -> None:
        self.git = folder

    def files(self) -> List[str]:
        return _run(["git", "--git-dir", self.git, "ls-tree", "-r", "--name-only", "HEAD"]).splitlines()

    def show(self, path: str) -> str:
        return _run(["git", "--git-dir", self.git, "show", "HEAD:" + path])

    def log(self, *args: str) -> str:
        return _run(["git", "--git-dir", self.git, "log", *args])


def _mirrors(root: str) -> Dict[str, Mirror]:
    found = {}
    for name, folder in REPOS.items():
        git = os.path.join(root, folder, "repo")
        if os.path.isdir(git):
            found[name] = Mirror(git)
        else:
            print("missing mirror %s (fetch github:%s)" % (git, folder.replace("+", "/")), file=sys.stderr)
    return found


def _repo_files(mirrors: Dict[str, Mirror], keep: Callable[[str], bool]) -> Iterator[Tuple[str, str]]:
    for name, mirror in sorted(mirrors.items()):
        for path in mirror.files():
            if keep(path):
                yield "%s:%s" % (name, path), mirror.show(path)


# -- kinds read from fetched repositories ------------------------------------------------------


def git_logs(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    for name, mirror in sorted(m.items()):
        yield name + ":git log", mirror.log("-n", "400", "--stat")
        yield name + ":git log -p", mirror.log("-p", "-n", "60")


def lockfiles(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    names = ("package-lock.json", "poetry.lock", "Cargo.lock", "go.sum", "yarn.lock", "pnpm-lock.yaml")
    yield from _repo_files(m, lambda p: os.path.basename(p) in names)
    yield from _local_files(["/usr/lib/node_modules/npm/**/package-lock.json"])


def source(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    def keep(path: str) -> bool:
        return path.endswith(SOURCE_EXTENSIONS) and "/dist/" not in "/" + path
    yield from _repo_files(m, keep)
    yield from _local_files([SITE + "/requests/*.py", SITE + "/botocore/*.py", SITE + "/flask/*.py",
                             "/usr/lib/node_modules/npm/lib/**/*.js"])


def workflows(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    yield from _repo_files(m, lambda p: p.startswith(".github/") and p.endswith((".yml", ".yaml")))
    yield from _generated_workflows()


def kubernetes(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    yield from _repo_files({"k8s": m["k8s"]} if "k8s" in m else {},
                           lambda p: p.endswith((".yaml", ".yml", ".json")))
    yield from _generated_secrets()


def minified(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    yield from _repo_files(m, lambda p: p.endswith((".min.js", ".js.map", ".cjs.map", ".min.js.map")))
    yield from _local_files([os.path.expanduser("~/.rustup/toolchains/*/share/doc/rust/html/rustdoc/*.min.js"),
                             os.path.expanduser("~/.rustup/toolchains/*/share/doc/rust/html/static.files/*.js")])


def docs(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    yield from _repo_files(m, lambda p: p.endswith(".md"))


def npm_scripts(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    yield from _repo_files(m, lambda p: os.path.basename(p) == "package.json")
    yield from _local_files(["/usr/lib/node_modules/npm/node_modules/*/package.json",
                             "/usr/lib/node_modules/corepack/package.json"])


# -- kinds read from installed packages --------------------------------------------------------


def _local_files(patterns: List[str]) -> Iterator[Tuple[str, str]]:
    for pattern in patterns:
        for path in sorted(glob.glob(pattern, recursive=True)):
            yield "local:" + path, _read(path)


def grammars(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    yield from _local_files(["/usr/share/vim/vim90/syntax/*.vim", SITE + "/pygments/lexers/*.py",
                             SITE + "/IPython/core/*.py"])


_SECRET_EXAMPLE_KEYS = ("SecretAccessKey", "SessionToken", "Password", "SecretString", "PrivateKey",
                        "SecretBinary", "ClientSecret", "AuthToken", "password")


def aws_cli(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    """botocore's own example answers (the shapes `aws` prints), then generated pages."""
    for path in sorted(glob.glob(SITE + "/botocore/data/*/*/examples-1.json")):
        try:
            examples = json.loads(_read(path)).get("examples", {})
        except ValueError:
            continue
        for operation, cases in sorted(examples.items()):
            for case in cases:
                text = json.dumps(case.get("output") or {}, indent=4)
                if len(text) > 40 and not any(key in text for key in _SECRET_EXAMPLE_KEYS):
                    yield "botocore:%s:%s" % (path.split("/data/")[1].split("/")[0], operation), text
    rng = random.Random(23)
    for number in range(400):
        yield "generated:aws %d" % number, _aws_page(rng)


# -- kinds from commands run here --------------------------------------------------------------


def commands(m: Dict[str, Mirror]) -> Iterator[Tuple[str, str]]:
    yield "command:dpkg -l", _run(["dpkg", "-l"])
    for folder in ("/usr/lib", "/usr/bin", "/usr/share/doc", "/etc", SITE):
        yield "command:ls -l " + folder, _run(["ls", "-l", folder])
    yield "command:pytest", _pytest_output()
    for name, mirror in sorted(m.items()):
        yield name + ":git branch -a", _run(["git", "--git-dir", mirror.git, "branch", "-a", "-v"])
    rng = random.Random(7)
    for number in range(60):
        yield "generated:git config %d" % number, _git_config(rng)
        yield "generated:sudoers %d" % number, _sudoers(rng)


def _pytest_output() -> str:
    with tempfile.TemporaryDirectory() as folder:
        lines = ["import pytest", ""]
        for n in range(120):
            words = random.Random(n).sample(["token", "auth", "session", "cookie", "password", "login",
                                             "parse", "render", "cache", "client", "secret", "key"], 3)
            name = "_".join(words)
            fails = n % 17 == 0
            lines.append("def test_%s_%d():\n    assert %s\n" % (name, n, "1 == 2" if fails else "True"))
        with open(os.path.join(folder, "test_generated.py"), "w") as f:
            f.write("\n".join(lines))
        return _run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "test_generated.py"],
                    cwd=folder)


# -- seeded generators -------------------------------------------------------------------------


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _b64(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(n))


def _aws_page(rng: random.Random) -> str:
    account = "".join(rng.choice(string.digits) for _ in range(12))
    region = rng.choice(["us-east-1", "eu-west-1", "ap-southeast-2"])
    role = rng.choice(["deploy-role", "ci-github-actions", "TokenRefresherRole", "AuthServiceRole",
                       "service-role/AWSLambdaBasicExecutionRole", "SecretsReaderRole"])
    token = "eyJ" + _b64(rng, rng.randint(80, 300)).replace("/", "_").replace("+", "-")
    kind = rng.randrange(5)
    if kind == 0:
        page = {"Contents": [{"Key": "logs/%s.gz" % _hex(rng, 16), "ETag": '"%s"' % _hex(rng, 32),
                              "Size": rng.randint(1, 10 ** 6), "StorageClass": "STANDARD"}
                             for _ in range(rng.randint(2, 8))], "NextToken": token, "KeyCount": 8}
    elif kind == 1:
        page = {"UserId": "AROA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(17))
                + ":botocore-session-%d" % rng.randint(10 ** 9, 10 ** 10), "Account": account,
                "Arn": "arn:aws:sts::%s:assumed-role/%s/session" % (account, role)}
    elif kind == 2:
        page = {"Roles": [{"RoleName": role.split("/")[-1], "RoleId": "AROA" + _hex(rng, 17).upper(),
                           "Arn": "arn:aws:iam::%s:role/%s" % (account, role), "Path": "/",
                           "MaxSessionDuration": 3600}], "IsTruncated": True, "Marker": token}
    elif kind == 3:
        page = {"Instances": [{"InstanceId": "i-" + _hex(rng, 17), "ClientToken": "%s-%s" % (_hex(rng, 8), _hex(rng, 12)),
                               "IamInstanceProfile": {"Arn": "arn:aws:iam::%s:instance-profile/%s" % (account, role.split("/")[-1]),
                                                      "Id": "AIPA" + _hex(rng, 17).upper()}}],
                "ReservationId": "r-" + _hex(rng, 17), "OwnerId": account}
    else:
        page = {"SecretList": [{"ARN": "arn:aws:secretsmanager:%s:%s:secret:prod/db-password-%s" % (region, account, _hex(rng, 6)),
                                "Name": "prod/db-password", "KmsKeyId": "arn:aws:kms:%s:%s:key/%s" % (region, account, _hex(rng, 36)),
                                "LastAccessedDate": "2026-11-30T00:00:00+00:00"}], "NextToken": token}
    return json.dumps(page, indent=4)


def _git_config(rng: random.Random) -> str:
    user = rng.choice(["alice", "bob", "carol"])
    return "\n".join([
        "file:/home/%s/.gitconfig\tuser.name=%s" % (user, user.title()),
        "file:/home/%s/.gitconfig\tuser.email=%s@example.com" % (user, user),
        "file:/home/%s/.gitconfig\tcredential.helper=store" % user,
        "file:/home/%s/.gitconfig\tcredential.https://github.com.helper=!/usr/bin/gh auth git-credential" % user,
        "file:/home/%s/.gitconfig\tcredential.https://gist.github.com.helper=!/usr/bin/gh auth git-credential" % user,
        "file:/home/%s/.gitconfig\tcredential.useHttpPath=true" % user,
        "file:/home/%s/.gitconfig\thttp.cookiefile=/home/%s/.gitcookies" % (user, user),
        "file:.git/config\tcore.repositoryformatversion=0",
        "file:.git/config\tremote.origin.url=https://github.com/%s/project.git" % user,
        "file:.git/config\tremote.origin.fetch=+refs/heads/*:refs/remotes/origin/*",
        "file:.git/config\tbranch.main.remote=origin",
        "file:.git/config\tpush.autoSetupRemote=%s" % rng.choice(["true", "false"]),
    ]) + "\n"


def _sudoers(rng: random.Random) -> str:
    user = rng.choice(["node", "vscode", "dev"])
    return ("# /etc/sudoers.d/%s\n%s ALL=(root) NOPASSWD: /usr/local/bin/init-firewall.sh\n"
            "%s ALL=(ALL) NOPASSWD:ALL\nDefaults env_keep += \"SSH_AUTH_SOCK\"\n") % (user, user, user)


def _generated_workflows() -> Iterator[Tuple[str, str]]:
    rng = random.Random(11)
    for number in range(40):
        yield "generated:workflow %d" % number, """name: release
on:
  push:
    tags: ['v*']
permissions:
  contents: read
  id-token: write
  packages: write
jobs:
  publish:
    runs-on: ubuntu-latest
    permissions:
      id-token: write
      attestations: write
    steps:
      - uses: actions/checkout@%s
      - uses: aws-actions/configure-aws-credentials@v4
        with:
          role-to-assume: arn:aws:iam::%s:role/github-actions-release
          aws-region: us-east-1
      - run: npm publish --provenance --access public
        env:
          NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}
""" % (_hex(rng, 40), "".join(rng.choice(string.digits) for _ in range(12)))


def _generated_secrets() -> Iterator[Tuple[str, str]]:
    rng = random.Random(5)
    for number in range(40):
        name = rng.choice(["postgres", "redis", "api"])
        yield "generated:k8s secret %d" % number, """apiVersion: v1
kind: Secret
metadata:
  name: %s-credentials
  namespace: default
  labels:
    app.kubernetes.io/name: %s
type: Opaque
stringData:
  host: %s.default.svc.cluster.local
  port: "%d"
  database: app
  sslmode: require
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
spec:
  template:
    spec:
      containers:
        - name: app
          env:
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: %s-credentials
                  key: password
""" % (name, name, name, rng.choice([5432, 6379, 8443]), name, name)


KINDS = {
    "git_log": git_logs, "lockfile": lockfiles, "source": source, "ci_workflow": workflows,
    "kubernetes": kubernetes, "minified_js": minified, "markdown": docs, "npm_package": npm_scripts,
    "grammar": grammars, "aws_cli": aws_cli, "command": commands,
}


def build(out: str, mirrors_root: str, mib_per_kind: float) -> Dict[str, int]:
    os.makedirs(out, exist_ok=True)
    mirrors = _mirrors(mirrors_root)
    sizes = {}
    budget = int(mib_per_kind * MIB)
    for kind, produce in KINDS.items():
        total = 0
        per_origin: Dict[str, int] = {}
        with open(os.path.join(out, kind + ".jsonl"), "w", encoding="utf-8") as f:
            for source_name, text in produce(mirrors):
                origin = source_name.split(":")[0]
                if origin == "local":
                    origin = os.path.dirname(source_name)
                for piece in chunks(text or ""):
                    # no one repository or package fills a kind: a third of it at most
                    if total >= budget or per_origin.get(origin, 0) >= budget // 3:
                        break
                    f.write(json.dumps({"kind": kind, "source": source_name, "text": piece}) + "\n")
                    size = len(piece.encode("utf-8"))
                    total += size
                    per_origin[origin] = per_origin.get(origin, 0) + size
                if total >= budget:
                    break
        sizes[kind] = total
        print("%-12s %6.2f MiB" % (kind, total / MIB))
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "precision-corpus"))
    parser.add_argument("--mirrors", default="/work/.mirror")
    parser.add_argument("--mib-per-kind", type=float, default=3.0)
    args = parser.parse_args()
    sizes = build(args.out, args.mirrors, args.mib_per_kind)
    print("total        %6.2f MiB in %s" % (sum(sizes.values()) / MIB, args.out))


if __name__ == "__main__":
    main()
