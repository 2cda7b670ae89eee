"""Issue 14: the syntaxes of the named family, values apart from their names, command lines,
HTTP and URL forms, key names, look-alikes kept, repeated values, and the corpus figures."""
import json
import os
import re
import sys
import time

import pytest
from conftest import run_cli, write_script, write_settings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import magihook  # noqa: E402

MARKER = "<redacted:credential>"
S = "Zq8rT2wLp0vX4nB6"


def _load(name):
    with open(os.path.join(HERE, "data", name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


POSITIVES = _load("secrets_positive.jsonl")
NEGATIVES = _load("secrets_negative.jsonl")
KEY_NAMES = _load("secret_key_names.jsonl")


# ---- the corpus figures (criterion 3) ------------------------------------------------

def test_corpus_size_and_categories():
    assert len(POSITIVES) >= 600
    assert len(NEGATIVES) >= 400
    formats = {p["format"] for p in POSITIVES}
    for category in ("go_typed", "go_walrus", "make_assign", "php_assign", "java", "header_call",
                     "xml_pair", "xml_element", "kubernetes_secret_data", "command_line", "netrc",
                     "authorization_basic", "authorization_ssws", "url_sig", "url_oauth_code",
                     "url_key", "url_access_token", "log_bare_key", "sessionid", "smtppass",
                     "free_text", "vendor_name_only", "repeated_value", "yaml", "toml", "dotenv"):
        assert category in formats


def test_corpus_recall_is_total():
    missed = [p for p in POSITIVES if p["secret"] in magihook.redact_credentials(p["text"])]
    print("recall: %d/%d" % (len(POSITIVES) - len(missed), len(POSITIVES)))
    assert missed == []


def test_corpus_look_alikes_are_kept():
    touched = [n for n in NEGATIVES if magihook.redact_credentials(n["text"]) != n["text"]]
    print("look-alikes kept: %d/%d" % (len(NEGATIVES) - len(touched), len(NEGATIVES)))
    assert len(touched) <= len(NEGATIVES) // 100
    assert touched == []          # the exact count today


def test_corpus_key_names():
    wrong = [k for k in KEY_NAMES if magihook.is_credential_key(k["key"]) is not k["credential"]]
    print("key names: %d/%d" % (len(KEY_NAMES) - len(wrong), len(KEY_NAMES)))
    assert len(wrong) <= len(KEY_NAMES) // 100
    assert wrong == []


# ---- each syntax: the exact output -------------------------------------------------

REDACTED = [
    ('var token string = "%s"' % S, 'var token string = "%s"' % MARKER),
    ("token := `%s`" % S, "token := `%s`" % MARKER),
    ('String passWord = "%s";' % S, 'String passWord = "%s";' % MARKER),
    ("API_TOKEN ?= %s" % S, "API_TOKEN ?= %s" % MARKER),
    ("API_TOKEN ::= %s" % S, "API_TOKEN ::= %s" % MARKER),
    ("API_TOKEN :::= %s" % S, "API_TOKEN :::= %s" % MARKER),
    ('$password .= "%s";' % S, '$password .= "%s";' % MARKER),
    ("$config['api_key'] = '%s';" % S, "$config['api_key'] = '%s';" % MARKER),
    ("let token: &str = \"%s\";" % S, "let token: &str = \"%s\";" % MARKER),
    ('System.setProperty("CODECOV_TOKEN", "%s");' % S, 'System.setProperty("CODECOV_TOKEN", "%s");' % MARKER),
    ('req.Header.Set("x-api-key", "%s")' % S, 'req.Header.Set("x-api-key", "%s")' % MARKER),
    ('req.Header.Add("Authorization", "Bearer %s")' % S,
     'req.Header.Add("Authorization", "Bearer %s")' % MARKER),
    ('<add key="Password" value="%s"/>' % S, '<add key="Password" value="%s"/>' % MARKER),
    # An element's own name and value: a password may be a word (NuGet's ClearTextPassword).
    ('<add key="ClearTextPassword" value="TestSourcePassword" />',
     '<add key="ClearTextPassword" value="%s" />' % MARKER),
    # A fallback literal after a credential's name (JS `||`, `??`), on its line or the next.
    ('const key = process.env.ACCOUNT_KEY ||\n  "%s";' % S,
     'const key = process.env.ACCOUNT_KEY ||\n  "%s";' % MARKER),
    ("const t = process.env.API_TOKEN ?? '%s';" % S, "const t = process.env.API_TOKEN ?? '%s';" % MARKER),
    # C++'s brace initializer of one literal, on its line or the next.
    ('static const std::string AccountKey{\n    "%s"};' % S,
     'static const std::string AccountKey{\n    "%s"};' % MARKER),
    ("<flyToken>%s</flyToken>" % S, "<flyToken>%s</flyToken>" % MARKER),
    ("<secret>%s</secret>" % S, "<secret>%s</secret>" % MARKER),
    ("kind: Secret\ndata:\n  tls.key: %s\n  user: YWRtaW4=\n" % S,
     "kind: Secret\ndata:\n  tls.key: %s\n  user: %s\n" % (MARKER, MARKER)),
    ("kind: Secret\nstringData:\n  app.conf: |\n    %s\n    user = %s\n  note: a b%s\n" % (S, S, S),
     "kind: Secret\nstringData:\n  app.conf: |\n    %s\n    %s\n  note: %s\n" % (MARKER, MARKER, MARKER)),
    ("- name: API_KEY\n  value: %s" % S, "- name: API_KEY\n  value: %s" % MARKER),
    ("sshpass -p '%s' ssh host" % S, "sshpass -p %s ssh host" % MARKER),
    ("docker login -u bob -p %s reg.test" % S, "docker login -u bob -p %s reg.test" % MARKER),
    ("az login -u a@b.test -p %s" % S, "az login -u a@b.test -p %s" % MARKER),
    ("ldapsearch -x -D cn=a -w %s -b dc=x" % S, "ldapsearch -x -D cn=a -w %s -b dc=x" % MARKER),
    ("sqlcmd -S db -U sa -P %s -Q x" % S, "sqlcmd -S db -U sa -P %s -Q x" % MARKER),
    ("openssl rsa -passout pass:%s -out a" % S, "openssl rsa -passout pass:%s -out a" % MARKER),
    ("aws configure set aws_secret_access_key %s" % S,
     "aws configure set aws_secret_access_key %s" % MARKER),
    ("curl -X POST \\\n  -u admin:%s \\\n  https://x.test" % S,
     "curl -X POST \\\n  -u admin:%s \\\n  https://x.test" % MARKER),
    ("machine h.test\n  login bob\n  password %s\n" % S, "machine h.test\n  login bob\n  password %s\n" % MARKER),
    ("Authorization: SSWS %s" % S, "Authorization: SSWS %s" % MARKER),
    ("Authorization: Custom %s" % S, "Authorization: Custom %s" % MARKER),
    ("https://a.blob.core.windows.net/c?sv=1&sig=%s%%3D" % S, "https://a.blob.core.windows.net/c?sv=1&sig=%s" % MARKER),
    ("GET /oauth/callback?code=%s&state=x" % S, "GET /oauth/callback?code=%s&state=x" % MARKER),
    ("https://maps.test/api?key=%s&q=x" % S, "https://maps.test/api?key=%s&q=x" % MARKER),
    ("INFO Key=%s status=200" % S, "INFO Key=%s status=200" % MARKER),
    ('mailgunKey = "%s"' % S, 'mailgunKey = "%s"' % MARKER),
    ("sessionid=%s" % S, "sessionid=%s" % MARKER),
    ("smtppass=%s" % S, "smtppass=%s" % MARKER),
    ("mailgun token - '%s'" % S, "mailgun token - '%s'" % MARKER),
    ("export API_KEY=%s\necho using %s" % (S, S), "export API_KEY=%s\necho using %s" % (MARKER, MARKER)),
]


@pytest.mark.parametrize("text, expected", REDACTED, ids=[t[:24] for t, _ in REDACTED])
def test_syntax_is_redacted_exactly(text, expected):
    assert magihook.redact_credentials(text) == expected


@pytest.mark.parametrize("head", ["machine h.test login bob", "default login bob"])
@pytest.mark.parametrize("filler", ["self.password = x\n", "if password is None:\n", "caf\u00e9 password x\n"])
def test_a_netrc_entry_after_a_long_text_is_found(head, filler):
    # A long text is searched for an entry's head once, at its first "password " after whitespace
    # (by re in an ASCII text, by str in one of wider characters); the others are passed by.
    text = filler * (magihook._PICK_TEXT // len(filler) + 1) + head + " password Xq8rT2wLp0vX4nB6\n"
    assert magihook.redact_credentials(text).endswith(head + " password " + MARKER + "\n")


@pytest.mark.parametrize("found", ['if "Xq8rT2wLp0vX4nB6" == password:', 'if "Xq8rT2wLp0vX4nB6" != password:',
                                   "IgP/58waM+Dx3A5idNoDCD==:84YrNbuBhOwc8fjOWOrOwd8S7Ba16j7p"])
@pytest.mark.parametrize("filler", ["x = 'a'\n", "caf\u00e9 x = 'a'\n"])
def test_what_follows_an_equality_at_the_end_of_a_long_text_is_found(found, filler):
    # A long ASCII text is searched for "==" once, for the passes it leads; "!=" leads none.
    text = filler * (magihook._PICK_TEXT // len(filler) + 1) + found
    assert "Xq8rT2wLp0vX4nB6" not in magihook.redact_credentials(text)
    assert "84YrNbuBhOwc8fjOWOrOwd8S7Ba16j7p" not in magihook.redact_credentials(text)


@pytest.mark.parametrize("filler", ["tokens = 5\n", "caf\u00e9 tokens\n"])
def test_a_bearer_token_after_a_long_text_is_found(filler):
    # A long ASCII text runs the bearer pass without searching for its literal first.
    text = filler * (magihook._PICK_TEXT // len(filler) + 1) + "curl -H 'x: Bearer Xq8rT2wLp0vX4nB6'\n"
    assert magihook.redact_credentials(text).endswith("x: Bearer %s'\n" % MARKER)


KEPT = [
    "token: ${{ needs.vault.outputs.x }}", 'password = "%s"', "password: %s", "api_key=%(key)s",
    'token = "{}"', "password: <b>x</b>", "password:  24 bytes", "auth: user 4821",
    "\tat com.acme.TokenService.login(TokenService.java:88)", 'os.getenv("API_KEY", "")',
    '("password", "username")', 'headers.set("x-api-key", apiKey);', "ssh -p 2222 host",
    "docker run -p 8080:80 nginx", "openssl req -passout env:PASS", "aws configure set region eu-west-1",
    "https://x.test/items?code=SKU12345678", "https://x.test/search?key=created_at",
    "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n", "<secretName>db-creds</secretName>",
    "machine h.test login bob", '<add key="Timeout" value="30"/>', "sshpass -e ssh host",
    '<param name="tokenValidity" value="3600"/>', '<property name="passwordEncoder" value="bcrypt"/>',
    '<add key="Password" value="Password"/>', '<add key="Password" value="%PASSWORD%"/>',
    'const t = process.env.API_TOKEN || "anonymous";', "const t = token || '';", 'if (password || "x") {}',
    'getToken() { return "bearer"; }', 'getTokenType() { return "%s"; }' % S, 'x = getToken(); y = "%s"' % S,
    'def password(self):\n    return "Enter password:"', "def token(self):\n    return self._token",
    'print $password{"bob"};', 'std::string password{"Enter a password"};', 'creds{"user": "%s"}' % S,
    "headers = { Authorization: `Bearer ${apiKey}` };", "redis-cli -a $REDIS_PASSWORD ping",
    '{"token_type": "bearer", "password_policy": "strict"}', "password password password x",
    "the default password is long", 'fields = ("api_key", "created_at_2024")',
]


@pytest.mark.parametrize("text", KEPT)
def test_look_alike_is_kept(text):
    assert magihook.redact_credentials(text) == text


@pytest.mark.parametrize("key, verdict", [
    ("mailgunKey", True), ("mailgun_key", True), ("auth0Key", True), ("sessionid", True),
    ("smtppass", True), ("session_id", False), ("bypass", False), ("sort_key", False),
    ("cache_key", False), ("mailgun_url", False),
])
def test_key_names(key, verdict):
    assert magihook.is_credential_key(key) is verdict


def test_lowered_keeps_positions_and_lowers_only_ascii():
    for text in ("A\u212aB\u0130x", "Tok\u2014EN", "Z\U0001F600A", "X\ud800\udc00Y", "\ud800\udc00"):
        low = magihook._lowered(text)
        assert len(low) == len(text)
        assert [c for c in low if c.isascii()] == [c.lower() for c in text if c.isascii()]
        assert [a == b for a, b in zip(low, text) if not a.isascii()] == [True] * sum(
            not c.isascii() for c in text)


def test_many_distinct_named_secrets_all_go_and_only_the_first_are_searched_again():
    # Each named value is redacted where it stands; of the values to look for elsewhere in the
    # text only the first _REPEAT_MAX are searched (which keeps the work linear).
    line = "api_key=%s other text and more words here\n"
    values = ["k%07dZq8rT2wLp" % i for i in range(4000)]
    text = "".join(line % value for value in values) + "copies: %s %s" % (values[0], values[-1])
    out = magihook.redact_credentials(text)
    assert out.count(MARKER) == 4001 and out.endswith("copies: %s %s" % (MARKER, values[-1]))


def _forget_compiled_name_patterns():
    for cache in (magihook._named_lead_re, magihook._named_name_re, magihook._named_full_re,
                  magihook._config_set_re, magihook._netrc_re):
        cache.cache_clear()


# (_NAME_TEXT, _FULL_TEXT) that make any text's name passes run in each _name_mode.
NAME_MODES = {"stems": (10 ** 12, 10 ** 12), "name": (0, 10 ** 12), "full": (0, 0)}


def redacted_in_every_mode(monkeypatch, text):
    results = []
    for name_text, full_text in NAME_MODES.values():
        monkeypatch.setattr(magihook, "_NAME_TEXT", name_text)
        monkeypatch.setattr(magihook, "_FULL_TEXT", full_text)
        results.append(magihook.redact_credentials(text))
    return results


def test_a_short_text_compiles_only_the_passes_it_can_match():
    # The patterns are compiled on first use (bench/README.md has what each costs).
    _forget_compiled_name_patterns()
    magihook.redact_credentials('Run the tests: pytest -q --maxfail=1 (src/app)')
    assert [magihook._named_lead_re.cache_info().currsize, magihook._config_set_re.cache_info().currsize,
            magihook._netrc_re.cache_info().currsize] == [0, 0, 0]
    assert magihook.redact_credentials('login: DB_PASSWORD=x1y2z3w4v5') == "login: DB_PASSWORD=" + MARKER
    assert magihook._named_lead_re.cache_info().currsize == 1          # the "p" lead only (pass)


def test_a_short_text_with_a_stem_but_no_name_compiles_no_name_pattern():
    # "key", "token", "auth" in a command line or a path with no separator after the name: the
    # lead's pattern cannot match it, so it is not compiled.
    _forget_compiled_name_patterns()
    for text in ('ls -la /srv/build && echo key: done', 'grep -rn get_token src/auth/',
                 'cat ~/.ssh/known_hosts | grep secretive'):
        assert magihook.redact_credentials(text) == text
    assert magihook._named_lead_re.cache_info().currsize == 0
    assert magihook.redact_credentials('echo done; export API_TOKEN=x1y2z3w4v5') == \
        "echo done; export API_TOKEN=" + MARKER
    assert magihook._named_lead_re.cache_info().currsize == 1


@pytest.mark.parametrize("name", ["credits", "secretary", "token_budget", "conn_pool"])
def test_a_secretstr_type_after_a_name_that_is_no_credential_is_read_alike_both_ways(monkeypatch, name):
    # A name judged no credential, then a typed separator holding a stem of its own (SecretStr):
    # the name pattern alone goes on after the name and finds SecretStr; the pattern of name and
    # value must too, or a long text would redact differently from a short one.
    text = '%s: SecretStr = "%s"' % (name, S)
    assert redacted_in_every_mode(monkeypatch, text) == ['%s: SecretStr = "%s"' % (name, MARKER)] * 3


@pytest.mark.parametrize("text, expected", [
    ('token: string = "%s"' % S, 'token: string = "%s"' % MARKER),
    ("const TOKEN: &'static str = \"%s\";" % S, "const TOKEN: &'static str = \"%s\";" % MARKER),
    ('password: str = "%s"' % S, 'password: str = "%s"' % MARKER),
    ("secretKeyRef: {name: db, key: password}\n", "secretKeyRef: {name: db, key: password}\n"),
    ('"auth": {"user": "bob"}, "credentials": [1, 2]', '"auth": {"user": "bob"}, "credentials": [1, 2]'),
    ("password:\n  file: /run/secrets/db\n", "password:\n  file: /run/secrets/db\n"),
])
def test_a_typed_assignment_after_a_colon_and_a_colon_before_a_block_read_alike_both_ways(
        monkeypatch, text, expected):
    # The plain separators are tried first: a colon gives way to a typed assignment, and a colon
    # before a brace, a bracket or the line's end is no value's separator, in every pattern.
    assert redacted_in_every_mode(monkeypatch, text) == [expected] * 3


@pytest.mark.parametrize("prose", ["the password is Tr0ub4dor-x9Q", "passphrase: Tr0ub4dor-x9Q",
                                   "Your API key: Tr0ub4dor-x9Q", "my secret key: Tr0ub4dor-x9Q",
                                   "the token is Tr0ub4dor-x9Q"])
def test_prose_in_a_long_text_is_found_in_every_way_of_reading_names(monkeypatch, prose):
    # A lead's own pattern looks ahead for what its stems leave of a prose noun (_PROSE_TAILS:
    # `ord` after passw, ` key` after secret's cret), the stems' shared lookahead for every one.
    pad = "# note: a line of output, nothing in it = 1\n" * 400
    expected = pad + prose.replace("Tr0ub4dor-x9Q", MARKER)
    assert redacted_in_every_mode(monkeypatch, pad + prose) == [expected] * 3


def test_a_leads_stems_of_one_literal_are_written_once_and_match_as_each_alone():
    # _stems_alternation writes the stems that share a literal after it once, which keeps every
    # match only while no literal of a lead starts another (stems with different literals then
    # never match at one place).
    text = ("token tokens tokenizer api_key apiKey key keyboard the api key is a monkey key=x "
            "cookie DB_PASS passwd password passphrase passcode db_pw pwd jwt secret credit "
            "conn_str connectionstring access_id auth author account bearer bundle_x__y dsn "
            "sessionid sonar.login ") * 3
    low = text.lower()
    for lead in magihook._named_leads():
        literals = {magihook._stem_literal(stem) for stem in magihook._lead_stems(lead)}
        assert not [(a, b) for a in literals for b in literals if a != b and b.startswith(a)]
        alone = re.compile("|".join(magihook._lead_stems(lead)), re.X)
        assert [m.span() for m in magihook._named_lead_re(lead).finditer(low)] == \
            [m.span() for m in alone.finditer(low)]
    assert magihook._stems_alternation("k").count("key(") == 1


def test_a_page_of_output_compiles_only_the_name_leads_whose_stems_it_holds():
    # Under _PICK_TEXT, a lead whose stem literals ("dsn", "bearer", "pass"...) the text lacks
    # compiles nothing; this page holds only "key".
    magihook._named_lead_re.cache_clear()
    page = "".join("2026-12-01 step %d: api_key=%s ok\n" % (i, S) for i in range(200))
    assert magihook._SHORT_TEXT < len(page) < magihook._PICK_TEXT
    assert magihook.redact_credentials(page).count(MARKER) == 200
    assert magihook._named_lead_re.cache_info().currsize == 1


def _name_dense_text():
    # Names with and without secrets after them, line after line, in every syntax the value
    # pattern reads (the corpus's positives), and code whose names hold no secret.
    lines = [p["text"] for p in POSITIVES] + [n["text"] for n in NEGATIVES]
    code = "token = self._cache.get(session.key)\napi_key: str = get_key()\nexport DB_PASSWORD=${DB_PASSWORD:-}\n"
    return "\n".join(lines) + "\n" + code * 400


def test_the_three_ways_of_reading_names_find_the_same_and_the_text_s_length_alone_chooses(monkeypatch):
    # Under _NAME_TEXT a lead's stems are found alone and one shared pattern reads each name's
    # rest; up to _FULL_TEXT the lead's stems and rest are one pattern; from _FULL_TEXT on, its
    # name and value are.  All three redact the same, and the choice is the text's length alone.
    text = _name_dense_text()
    _forget_compiled_name_patterns()
    monkeypatch.setattr(magihook, "_FULL_TEXT", len(text) + 1)
    monkeypatch.setattr(magihook, "_NAME_TEXT", len(text) + 1)
    stems = magihook.redact_credentials(text)
    assert [magihook._named_name_re.cache_info().currsize, magihook._named_full_re.cache_info().currsize] == [0, 0]
    monkeypatch.setattr(magihook, "_NAME_TEXT", len(text))
    names = magihook.redact_credentials(text)
    assert magihook._named_name_re.cache_info().currsize >= 2       # the "k" and "p" leads at least
    assert magihook._named_full_re.cache_info().currsize == 0
    monkeypatch.setattr(magihook, "_FULL_TEXT", len(text))
    together = magihook.redact_credentials(text)
    assert magihook._named_full_re.cache_info().currsize >= 2
    assert stems == names == together
    assert stems.count(MARKER) > len(POSITIVES) // 2
    monkeypatch.setattr(magihook, "_FULL_TEXT", len(text) + 1)
    monkeypatch.setattr(magihook, "_NAME_TEXT", len(text) + 1)
    assert magihook.redact_credentials(text) == stems


MIB = 1024 * 1024
# 1 MiB of each syntax's lead, repeated: the passes stay linear (CPU time, generous bound).
ADVERSARIAL = {
    "close_tags": "</password>", "elements": "<password>x1y2z3w4</password>", "dash_p": " -p ",
    "sshpass": "sshpass -p x ", "config_set": "config set ", "password_ws": "password ",
    "netrc": "machine a login b password c ", "sig": "?sig=", "code": "?code=", "key_eq": "key=",
    "comma_pairs": '"token", ', "backticks": "token := `", "typed": "token string = ",
    "value_lines": "api_key\n value: ", "xml_pairs": '<add key="password" value="',
    "dollar_pass": "$password .= ", "auth_scheme": "Authorization: Custom ",
    "k8s_lines": "kind: Secret\ndata:\n" + "  a: b1c2d3e4\n" * 64,
}


# CPU seconds 1 MiB of hostile text may cost: a hang detector (a pattern that backtracks
# quadratically takes minutes), never a speed check.  Figures: bench/cost_checks.py.
HANG_CPU_SECONDS = 20


@pytest.mark.parametrize("unit", [" -p x1y2z3w4 ", " -w secretpw ", "mysql -p'"])
def test_password_flags_without_their_command_are_not_taken(unit):
    # 1 MiB of -p / -w flags with no sshpass, docker ... login, ldap* (...) in the text: none is
    # a password (what each costs against the bare scan: bench/cost_checks.py).
    text = unit * (MIB // len(unit))
    start = time.process_time()
    assert magihook._password_flag_spans(text) == []
    assert time.process_time() - start < HANG_CPU_SECONDS


@pytest.mark.parametrize("unit", [" -p x1y2z3w4 ", " -w secretpw "])
def test_password_flags_without_their_command_are_kept(unit):
    # -p / -w flags with no sshpass, docker ... login, ldap* (...) in the text name no password.
    text = unit * (64 * 1024 // len(unit))
    assert magihook.redact_credentials(text) == text
    assert magihook._password_flag_spans("sshpass -p x1y2z3w4 ssh host\n" + text[:256]) == [(11, 19)]


def test_a_quoted_mysql_password_takes_everything_between_its_quotes():
    text = "mysql -p'" * 7281
    assert magihook.redact_credentials(text) == "mysql -p" + (MARKER + "mysql -p") * 3640 + "'"


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_syntax_input_stays_linear(name):
    unit = ADVERSARIAL[name]
    text = unit * (MIB // len(unit))
    start = time.process_time()
    magihook.redact_credentials(text)
    assert time.process_time() - start < HANG_CPU_SECONDS


# ---- repeated values across one payload (the hook sees none of them) --------------------

CAPTURE = "#!/bin/sh\ncat > stdin.json\n"


def test_a_secret_found_anywhere_is_redacted_everywhere_in_the_payload(project):
    write_script(project, "cap.sh", CAPTURE)
    config = write_settings(project, {"enabled": True, "after_tool": [
        {"label": "cap", "command": "./cap.sh", "payload": "redacted"}]})
    named, summarized, flagged = "Hx83kdLq0PzW", "s3cr3tValue9981", "pgS3cretPass77"
    event = {"tool": {"name": "bash", "call_id": "c"},
             "request": {"command": "ls", "description": "export API_TOKEN=%s" % named,
                         "env": [{"name": "DB_PASSWORD", "value": summarized}],
                         "argv": ["psql", "--password", flagged]},
             "result": {"tool_name": "bash", "success": True, "content": "x",
                        "metadata": {"note": "copies: %s %s %s" % (named, summarized, flagged),
                                     "nested": [{"deep": "again " + named}]}}}
    result = run_cli("run", "--phase", "after_tool", "--config", str(config), event=event, cwd=project)
    assert result.returncode == 0
    received = (project / "stdin.json").read_text()
    for secret in (named, summarized, flagged):
        assert secret not in received
    payload = json.loads(received)
    assert payload["result"]["metadata"]["note"] == "copies: %s %s %s" % (MARKER, MARKER, MARKER)
    assert payload["result"]["metadata"]["nested"] == [{"deep": "again " + MARKER}]
    assert payload["request"]["description"] == "export API_TOKEN=" + MARKER


def test_short_values_are_not_searched_elsewhere(project):
    # A 5-character password would take ordinary words with it: only its own place is redacted.
    original = {"password": "hello", "note": "hello world", "pin": "--pin 8421 and 8421"}
    bodies = magihook.redact_second_look({"request": magihook.redact_tree(original)},
                                         {"request": original})
    assert bodies["request"]["note"] == "hello world"
    assert bodies["request"]["password"]["kind"] == "credential"


def test_what_the_first_step_removed_is_read_off_its_spans():
    assert magihook._redaction("a token=%s b" % S) == ("a token=%s b" % MARKER, [S])
    assert magihook._redaction("token=%s secret=%s end" % (S, S + "2")) == (
        "token=%s secret=%s end" % (MARKER, MARKER), [S, S + "2"])
    assert magihook._redaction("no marker") == ("no marker", [])
    assert magihook._redaction("kept %s" % MARKER) == ("kept %s" % MARKER, [])   # a marker is no secret
    removals = {}
    original = {"note": "a token=%s b" % S, "password": S + "3", "other": "copies: %s %s" % (S, S + "3")}
    tree = magihook.redact_tree(original, removals)
    assert tree["note"] == "a token=%s b" % MARKER and tree["password"]["kind"] == "credential"
    assert removals == {"a token=%s b" % S: [S]}
    looked = magihook.redact_second_look({"request": tree}, {"request": original}, removals)
    assert looked["request"]["other"] == "copies: %s %s" % (MARKER, MARKER)
    assert magihook.redact_second_look({"request": tree}, {"request": original}) == looked


def test_argv_lists_are_read_as_one_command_line(project):
    write_script(project, "cap.sh", CAPTURE)
    config = write_settings(project, {"enabled": True, "before_tool": [
        {"label": "cap", "command": "./cap.sh", "payload": "redacted"}]})
    event = {"tool": {"name": "bash", "call_id": "c"},
             "request": {"command": "x", "argv": ["sshpass", "-p", S, "ssh", "host"],
                         "curl": ["curl", "-u", "admin:" + S + "1", "https://x.test"],
                         "openssl": ["openssl", "rsa", "-passout", "pass:" + S + "2"],
                         "psql": ["psql", "--password", "pg-s3cret", "--user", "bob"],
                         "paths": ["src/a.py", "src/b.py"]}}
    result = run_cli("run", "--phase", "before_tool", "--config", str(config), event=event, cwd=project)
    assert result.returncode == 0
    request = json.loads((project / "stdin.json").read_text())["request"]
    assert request["argv"] == ["sshpass", "-p", MARKER, "ssh", "host"]
    assert request["curl"] == ["curl", "-u", "admin:" + MARKER, "https://x.test"]
    assert request["openssl"] == ["openssl", "rsa", "-passout", "pass:" + MARKER]
    assert request["psql"][2] == {"redacted": True, "kind": "credential", "bytes": 9}
    assert request["paths"] == ["src/a.py", "src/b.py"]
