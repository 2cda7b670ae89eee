"""Generate the redaction corpus: secrets_positive.jsonl, secrets_negative.jsonl,
secret_key_names.jsonl.

Every credential is RANDOM, in the published shape of its format (fixed seed,
so the output is deterministic); no real key and no documentation example key
is used.  Run: python3 make_secret_corpus.py   (writes next to this file)
"""
import base64
import json
import os
import random
import string
import sys

# Vendor tokens come from the shapes of magihook's own rule table (magihook.token_rules(); the
# installed package, else the checkout this file sits in): regenerate after changing the table.
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir))
import magihook  # noqa: E402

SEED = 20250526
UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def s(self, chars, n):
        return "".join(self.rng.choice(chars) for _ in range(n))

    def mixed(self, chars, n):
        # Random, but with at least one digit and one letter, like real keys.
        while True:
            v = self.s(chars, n)
            if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
                return v

    def password(self, n=None):
        n = n or self.rng.randint(12, 24)
        return self.s(ALNUM, 1) + self.mixed(ALNUM + "!#%^*+=~", n - 1)

    def choice(self, seq):
        return self.rng.choice(seq)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# ---- secret makers: format -> function(gen) -> secret -------------------------

def aws_key_id(g):
    return g.choice(["AKIA", "ASIA"]) + g.s(UPPER + "234567", 16)


def github(g):
    return g.choice(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]) + g.mixed(ALNUM, 36)


def github_pat(g):
    return "github_pat_" + g.mixed(ALNUM, 22) + "_" + g.mixed(ALNUM, 59)


def gitlab(g):
    return "glpat-" + g.mixed(URLSAFE, 20)


def slack_token(g):
    return "%s-%s-%s-%s" % (g.choice(["xoxb", "xoxp"]), g.s(DIGITS, 12), g.s(DIGITS, 13), g.mixed(ALNUM, 24))


def stripe(g):
    return g.choice(["sk_live_", "rk_live_", "sk_test_"]) + g.mixed(ALNUM, 24)


def openai(g):
    return g.choice(["sk-proj-" + g.mixed(URLSAFE, 120), "sk-" + g.mixed(ALNUM, 48)])


def anthropic(g):
    return "sk-ant-api03-" + g.mixed(URLSAFE, 93) + "AA"


def google_api_key(g):
    return "AIza" + g.mixed(URLSAFE, 35)


def google_oauth(g):
    return g.choice(["ya29." + g.mixed(URLSAFE, 120), "GOCSPX-" + g.mixed(URLSAFE, 28)])


def npm(g):
    return "npm_" + g.mixed(ALNUM, 36)


def pypi(g):
    return "pypi-AgEIcHlwaS5vcmc" + g.mixed(URLSAFE, 120)


def sendgrid(g):
    return "SG." + g.mixed(URLSAFE, 22) + "." + g.mixed(URLSAFE, 43)


def twilio(g):
    return g.choice(["SK", "AC"]) + g.mixed(HEX, 32)


def huggingface(g):
    return "hf_" + g.s(UPPER + LOWER, 34)


def digitalocean(g):
    return g.choice(["dop_v1_", "doo_v1_"]) + g.mixed(HEX, 64)


def shopify(g):
    return g.choice(["shpat_", "shpss_", "shpca_"]) + g.mixed(HEX, 32)


def databricks(g):
    return "dapi" + g.mixed(HEX, 32)


def heroku(g):
    return "HRKU-AA" + g.mixed(URLSAFE, 58)


def vault(g):
    return g.choice(["hvs.", "hvb."]) + g.mixed(URLSAFE, 95)


def discord_bot(g):
    return g.choice("MNO") + g.mixed(URLSAFE, 23) + "." + g.mixed(URLSAFE, 6) + "." + g.mixed(URLSAFE, 27)


def telegram(g):
    return g.s("123456789", 1) + g.s(DIGITS, 9) + ":A" + g.mixed(URLSAFE, 34)


def jwt(g):
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": g.s(DIGITS, 10), "name": g.s(LOWER, 8),
                                 "iat": int(g.s(DIGITS, 10))}).encode())
    return "%s.%s.%s" % (header, payload, g.mixed(URLSAFE, 43))


def age_key(g):
    return "AGE-SECRET-KEY-1" + g.s("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)


def atlassian(g):
    return "ATATT3" + g.mixed(URLSAFE + "=", 186)


def postman(g):
    return "PMAK-" + g.s(HEX, 24) + "-" + g.s(HEX, 34)


def newrelic(g):
    return "NRAK-" + g.mixed(UPPER + DIGITS, 27)


def linear(g):
    return "lin_api_" + g.mixed(ALNUM, 40)


def grafana(g):
    return "glsa_" + g.mixed(ALNUM, 32) + "_" + g.s(HEX, 8)


def supabase(g):
    return "sbp_" + g.mixed(HEX, 40)


def pulumi(g):
    return "pul-" + g.mixed(HEX, 40)


def doppler(g):
    return "dp.pt." + g.mixed(ALNUM, 43)


def onepassword(g):
    return "ops_eyJ" + g.mixed(B64, 250)


def pem_body(g, lines=8):
    return [g.s(B64, 64) for _ in range(lines)] + [g.s(B64, 20) + "=="]


PEM_KINDS = ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
             "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK", "DSA PRIVATE KEY"]


def pem(g, newline):
    kind = g.choice(PEM_KINDS)
    body = pem_body(g)
    if kind == "RSA PRIVATE KEY" and g.rng.random() < 0.5:
        body = ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC," + g.s(HEX.upper(), 32), ""] + body
    return newline.join(["-----BEGIN %s-----" % kind] + body + ["-----END %s-----" % kind])


PREFIXED = [aws_key_id, github, github_pat, gitlab, slack_token, stripe, openai, anthropic,
            google_api_key, google_oauth, npm, pypi, sendgrid, twilio, huggingface, digitalocean,
            shopify, databricks, heroku, vault, discord_bot, telegram, jwt, age_key, atlassian,
            postman, newrelic, linear, grafana, supabase, pulumi, doppler, onepassword]

# Contexts for tokens recognised by their shape alone (the name around them
# is deliberately NOT credential-shaped, to test the shape rule).
SHAPE_CONTEXTS = [
    "echo {s} | pbcopy",
    "curl -sS https://api.example.test/v1/items -H 'X-Trace: 1' -d 'value={s}'",
    '{{"note": "rotate {s} before friday", "id": 7}}',
    "2025-03-04T05:06:07Z WARN loaded value={s} from cache",
    "found candidate: {s}\n  in file src/settings.py line 12",
    "config:\n  upstream: {s}\n  retries: 3",
]
NAME_CONTEXTS = [
    "export {NAME}={s}",
    "{NAME}={s} ./deploy.sh --prod",
    '{{"{name}": "{s}", "region": "eu-west-1"}}',
    "{name}: {s}",
    "  {name}: \"{s}\"\n  timeout: 30",
    "time=2025-01-01T00:00:00Z level=info {name}={s} user=alice",
    "docker run -e {NAME}={s} app:latest",
    "{{\\\"{name}\\\": \\\"{s}\\\"}}",
    "$env:{NAME} = \"{s}\"",
    "settings.{name} = '{s}'",
]
CRED_NAMES = ["api_key", "apiKey", "client_secret", "clientSecret", "refresh_token", "access_token",
              "auth_token", "password", "db_password", "secret_key", "private_key", "session_token",
              "aws_secret_access_key", "github_token", "slack_webhook_secret", "signing_key",
              "encryption_key", "passphrase", "x-api-key", "oauth_token", "credentials", "auth_code",
              "account_id", "connection_string", "dsn", "jwt", "token", "smtp_pass", "passwd"]


def positives(g):
    out = []

    def add(fmt, text, secret):
        assert secret in text, (fmt, text, secret)
        out.append({"format": fmt, "text": text, "secret": secret})

    for maker in PREFIXED:
        for ctx in g.rng.sample(SHAPE_CONTEXTS, 4):
            secret = maker(g)
            add(maker.__name__, ctx.format(s=secret), secret)
    for newline, label in (("\n", "pem_newlines"), ("\\n", "pem_escaped_newlines")):
        for ctx in ["{s}", '{{"private_key": "{s}\\n", "type": "service_account"}}',
                    "cat ~/.ssh/id_ed25519\n{s}\n$ ", "key material:\n{s}"]:
            secret = pem(g, newline)
            add(label, ctx.format(s=secret), secret)
    # Values after credential names, random values with no known prefix.
    for i in range(40):
        name = CRED_NAMES[i % len(CRED_NAMES)]
        ctx = NAME_CONTEXTS[i % len(NAME_CONTEXTS)]
        secret = g.password() if "pass" in name else g.mixed(ALNUM + "/+", g.rng.randint(20, 44))
        add("named_value", ctx.format(name=name, NAME=name.upper().replace("-", "_"), s=secret), secret)
    for _ in range(4):
        secret = g.mixed(B64, 40)
        add("aws_secret_access_key", "[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
            % (aws_key_id(g), secret), secret)
    # Authorization headers.
    for tmpl in ['curl -H "Authorization: Bearer {s}" https://api.example.test/me',
                 "curl -sS -H 'authorization: bearer {s}' https://x.example.test",
                 '{{"headers": {{"Authorization": "Bearer {s}", "Accept": "*/*"}}}}',
                 "GET /v1/me HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer {s}\r\n",
                 "Proxy-Authorization: Bearer {s}",
                 "http GET api.example.test Authorization:'Bearer {s}'"]:
        secret = g.mixed(URLSAFE + ".~", 40)
        add("authorization_bearer", tmpl.format(s=secret), secret)
    for tmpl in ['curl -H "Authorization: Basic {s}" https://x.example.test',
                 "Authorization: Basic {s}", "Proxy-Authorization: Basic {s}"]:
        secret = base64.b64encode(("%s:%s" % (g.s(LOWER, 6), g.password())).encode()).decode()
        add("authorization_basic", tmpl.format(s=secret), secret)
    for tmpl in ["Authorization: token {s}", 'curl -H "Authorization: token {s}" https://api.github.com']:
        secret = g.mixed(ALNUM, 40)
        add("authorization_token", tmpl.format(s=secret), secret)
    for _ in range(3):
        secret = g.mixed(URLSAFE, 48)
        add("bearer_bare", "request sent with Bearer %s (expires in 3600s)" % secret, secret)
    # Webhook URLs: the path after the fixed host part is the secret.
    for tmpl in ["curl -X POST -d @msg.json https://hooks.slack.com/services/{s}",
                 '{{"webhook": "https://hooks.slack.com/services/{s}"}}']:
        secret = "T%s/B%s/%s" % (g.s(UPPER + DIGITS, 8), g.s(UPPER + DIGITS, 10), g.mixed(ALNUM, 24))
        add("slack_webhook", tmpl.format(s=secret), secret)
    for tmpl in ["DISCORD_HOOK=https://discord.com/api/webhooks/{i}/{s}",
                 "requests.post('https://discordapp.com/api/webhooks/{i}/{s}', json=msg)"]:
        secret = g.mixed(URLSAFE, 68)
        add("discord_webhook", tmpl.format(i=g.s(DIGITS, 18), s=secret), secret)
    # Passwords in URLs.
    for tmpl in ["psql postgres://app:{s}@db.internal:5432/app",
                 "DATABASE_URL=postgresql://admin:{s}@10.0.0.5/prod",
                 "redis-cli -u redis://:{s}@cache:6379/0",
                 "git clone https://x-access-token:{s}@github.com/acme/repo.git",
                 "amqp://guest:{s}@rabbit:5672/",
                 "mongodb+srv://root:{s}@cluster0.mongodb.net/?retryWrites=true",
                 '{{"url": "https://bot:{s}@hooks.internal.test/notify"}}']:
        secret = g.password()
        add("url_password", tmpl.format(s=secret), secret)
    for _ in range(2):
        secret = g.s(HEX, 32)
        add("sentry_dsn", "SENTRY_URL=https://%s@o12345.ingest.sentry.io/678" % secret, secret)
    # Env exports and tools that take the password in the environment.
    for tmpl in ["PGPASSWORD={s} psql -h db -U app", "MYSQL_PWD={s} mysql -u root",
                 "export REDISCLI_AUTH={s}", "export VAULT_TOKEN={s}", "export SECRET={s}",
                 "set -x; DB_PASS={s} ./migrate"]:
        secret = g.password()
        add("env_export", tmpl.format(s=secret), secret)
    # CLI flags.
    for tmpl in ["mysql -u root -p'{s}' -h db", "mysqldump -uroot -p{s} app > dump.sql",
                 "mariadb -u admin -p\"{s}\" shop", "app login --password={s}",
                 "app login --password {s} --user bob", "gh auth login --token {s}",
                 'tool --api-key "{s}" run', "vault login -method=userpass password={s}",
                 "curl -u deploy:{s} https://ci.example.test/api", "curl --user admin:{s} https://x.test",
                 "wget --password={s} https://files.example.test/a.tgz"]:
        secret = g.password()
        add("cli_flag", tmpl.format(s=secret), secret)
    # Cookies, .env, npmrc, logs.
    secret = g.mixed(ALNUM, 32)
    add("cookie", "Cookie: sessionid=%s; csrftoken=abc" % secret, secret)
    secret = g.mixed(ALNUM, 32)
    add("cookie", "Set-Cookie: __Host-session=%s; Path=/; Secure; HttpOnly" % secret, secret)
    secret = g.mixed(ALNUM, 32)
    add("cookie", 'curl -H "Cookie: token=%s" https://x.test' % secret, secret)
    for name in ["STRIPE_SECRET", "SESSION_SECRET", "JWT_SECRET", "OPENAI_API_KEY", "SENDGRID_API_KEY"]:
        secret = g.mixed(ALNUM, 32)
        add("dotenv", "# production\nNODE_ENV=production\n%s=%s\nPORT=8080\n" % (name, secret), secret)
    secret = npm(g)
    add("npmrc", "//registry.npmjs.org/:_authToken=%s" % secret, secret)
    secret = g.mixed(ALNUM, 30)
    add("npmrc", "//npm.internal.test/:_authToken=%s\nalways-auth=true" % secret, secret)
    for tmpl in ["GET /callback?code=ok&access_token={s}&expires_in=3600 200",
                 "INFO oauth exchange ok refresh_token={s} scope=read",
                 "DEBUG headers={{'x-api-key': '{s}', 'accept': 'json'}}",
                 "[auth] client_secret={s}"]:
        secret = g.mixed(URLSAFE, 32)
        add("log_kv", tmpl.format(s=secret), secret)
    for tmpl in ["database:\n  host: db\n  password: {s}\n  port: 5432",
                 "spring.datasource.password={s}", "<add key=\"ApiKey\" />\nApiKey: {s}",
                 "ini:\n[client]\npassword = {s}"]:
        secret = g.password()
        add("config_file", tmpl.format(s=secret), secret)
    return out


# ---- issue 14: syntaxes, names apart from values, command lines, HTTP and URL forms --------------
# Each template holds {s} (the secret) and maybe {name} / {NAME} / {Name} (a credential name) or
# {vendor}.  Every positive row names its category in "format".

SYNTAX_NAMES = ["api_key", "apiKey", "auth_token", "client_secret", "password", "db_password",
                "access_token", "secret_key", "private_key", "signing_secret", "refresh_token",
                "session_token", "webhook_secret", "encryption_key", "passphrase"]
VENDORS = ["mailgun", "sendgrid", "twilio", "mapbox", "algolia", "pusher", "datadog", "sentry",
           "pagerduty", "intercom", "zendesk", "hubspot", "okta", "auth0", "plaid", "coinbase",
           "cloudflare", "fastly", "netlify", "vercel", "contentful", "shopify", "stripe", "codecov",
           "snyk", "launchdarkly", "mixpanel", "segmentio", "airtable", "notion", "dropbox", "zoom"]
SYNTAX_TEMPLATES = {
    "go_typed": ['var {name} string = "{s}"', 'const {name} string = "{s}"', '\tvar {Name} string = "{s}"\n'],
    "go_walrus": ['{name} := "{s}"', '{name} := `{s}`', 'cfg.{Name} = `{s}`'],
    "make_assign": ["{NAME} ?= {s}", "{NAME} ::= {s}", "{NAME} :::= {s}", "{NAME} := {s}",
                    "export {NAME} ?= {s}\nall:\n\t./run"],
    "php_assign": ['${name} .= "{s}";', "$config['{name}'] = '{s}';", "define('{NAME}', '{s}');",
                   "$this->{name} = \"{s}\";"],
    "java": ['String {name} = "{s}";', 'private static final String {NAME} = "{s}";',
             'System.setProperty("{NAME}", "{s}");', 'props.setProperty("{name}", "{s}");'],
    "kotlin_ts_rust": ['val {name}: String = "{s}"', 'const {name}: string = "{s}";',
                       'let {name}: &str = "{s}";', "let {name}: &'static str = \"{s}\";"],
    "python": ['{name} = "{s}"', 'os.environ["{NAME}"] = "{s}"', "settings.{name} = '{s}'",
               'client = Client({name}="{s}")'],
    "js": ["const {name} = '{s}';", 'process.env.{NAME} = "{s}";', 'headers.set("{name}", "{s}");',
           'axios.defaults.headers.common["{name}"] = "{s}";'],
    "header_call": ['req.Header.Set("X-Api-Key", "{s}")', 'conn.setRequestProperty("x-auth-token", "{s}");',
                    'req.Header.Add("Authorization", "Bearer {s}")', 'session.headers.update({{"X-API-Key": "{s}"}})'],
    "yaml": ["{name}: {s}", '{name}: "{s}"', "env:\n  - name: {NAME}\n    value: {s}\n",
             'spec:\n  env:\n  - name: {NAME}\n    value: "{s}"'],
    "toml": ['{name} = "{s}"', "[auth]\n{name} = '{s}'\nretries = 3"],
    "xml_pair": ['<add key="{Name}" value="{s}"/>', "<add key='{NAME}' value='{s}' />",
                 '<setting name="{name}" value="{s}"/>'],
    "xml_element": ["<{name}>{s}</{name}>", "<credentials>\n  <{name}>{s}</{name}>\n</credentials>",
                    "<flyToken>{s}</flyToken>", "<secret>{s}</secret>", "<apiKey>{s}</apiKey>"],
    "dotenv": ["{NAME}={s}", '{NAME}="{s}"', "# prod\n{NAME}='{s}'\nDEBUG=0"],
    "json_pair": ['{{"name": "{NAME}", "value": "{s}"}}', '[{{"name":"{NAME}","value":"{s}"}}]'],
}
CLI_TEMPLATES = [
    "sshpass -p {s} ssh deploy@10.0.0.7", "sshpass -p '{s}' scp a.tgz host:/tmp",
    "docker login -u bot -p {s} registry.example.test", "podman login --username ci -p \"{s}\" quay.io",
    "az login -u admin@example.test -p {s}", "az login --service-principal -u app -p {s} --tenant t",
    "ldapsearch -x -H ldap://dc -D cn=admin,dc=x -w {s} -b dc=x", "ldapmodify -D cn=root -w '{s}' -f a.ldif",
    "sqlcmd -S db.internal -U sa -P {s} -Q \"SELECT 1\"", "bcp dbo.t out t.dat -S db -U sa -P {s}",
    "openssl pkcs12 -export -in c.pem -out c.p12 -passout pass:{s}",
    "openssl rsa -in key.pem -passin pass:{s} -out plain.pem", "openssl enc -aes-256-cbc -pass pass:{s} -in a",
    "aws configure set aws_secret_access_key {s}", "aws configure set aws_session_token {s} --profile ci",
    "npm config set //registry.npmjs.org/:_authToken {s}", "yarn config set npmAuthToken {s}",
    "dotnet user-secrets set \"Api:ClientSecret\" \"{s}\"",
    "curl -sS -X POST \\\n  -u admin:{s} \\\n  https://ci.example.test/api",
    "curl \\\n  --user deploy:{s} \\\n  -d @a.json https://x.example.test",
    "redis-cli -h cache -a {s} ping", "mongosh --username root -p {s} admin",
]
NETRC_TEMPLATES = [
    "machine api.example.test login bob password {s}",
    "machine git.example.test\n  login ci\n  password {s}\n",
    "default login anonymous password {s}",
    "machine a.test login u password {s}\nmachine b.test login v password x{s}",
]
HTTP_TEMPLATES = {
    "authorization_basic": ["Authorization: Basic {b}", 'curl -H "Authorization: Basic {b}" https://x.test'],
    "authorization_ssws": ["Authorization: SSWS {s}", "authorization: SSWS {s}\naccept: application/json"],
    "authorization_other": ["Authorization: Token token={s}", "Authorization: GenieKey {s}",
                            "Authorization: Splunk {s}", "Authorization: sso-key {s}"],
    "api_key_header": ["X-Api-Key: {s}", "x-auth-token: {s}", "X-Vault-Token: {s}"],
}
URL_TEMPLATES = {
    "url_sig": ["https://acct.blob.core.windows.net/c/b.txt?sv=2021-08-06&se=2030-01-01&sr=b&sp=r&sig={s}",
                "https://storage.googleapis.com/b/o?X-Goog-Signature={s}&X-Goog-Date=20250101",
                "https://bucket.s3.amazonaws.com/k?X-Amz-Expires=300&X-Amz-Signature={s}"],
    "url_oauth_code": ["GET /oauth/callback?code={s}&state=xyz HTTP/1.1",
                       "https://app.example.test/auth/redirect?state=abc&code={s}",
                       "http://localhost:8080/login/callback?code={s}"],
    "url_key": ["https://maps.example.test/api/geocode?address=x&key={s}",
                "GET /v1/data?key={s}&format=json 200"],
    "url_access_token": ["https://graph.example.test/me?access_token={s}",
                         "wss://stream.example.test/ws?token={s}&v=2",
                         "https://x.test/export?api_key={s}"],
}
LOG_TEMPLATES = {
    "log_bare_key": ["2025-01-02T03:04:05Z INFO request Key={s} status=200", "Key={s}"],
    "sessionid": ["Cookie: sessionid={s}", "sessionid={s}; path=/", "PHPSESSID={s}"],
    "smtppass": ["smtppass={s}", "SMTPPASS={s}", "mail.smtppass = {s}"],
    "free_text": ["{vendor} token - '{s}'", "here is the {vendor} token - \"{s}\""],
}
VENDOR_TEMPLATES = ["{vendor}Key = \"{s}\"", "{vendor}_key: {s}", "{VENDOR}_KEY={s}",
                    "{VENDOR}_API_KEY={s}", "{vendor}_token = '{s}'", "{VENDOR}_SECRET={s}",
                    "config.{vendor}Key = \"{s}\";"]


def _fill(tmpl, g, secret, name=None, vendor=None):
    name = name or g.choice(SYNTAX_NAMES)
    vendor = vendor or g.choice(VENDORS)
    upper = "".join("_" + c if c.isupper() else c for c in name).upper().strip("_").replace("-", "_")
    return tmpl.format(s=secret, name=name, NAME=upper, Name=name[0].upper() + name[1:],
                       vendor=vendor, VENDOR=vendor.upper(), b=secret)


def _random_secret(g):
    return g.choice([g.password(), g.mixed(ALNUM, g.rng.randint(20, 40)),
                     g.mixed(URLSAFE, g.rng.randint(24, 48)), g.mixed(HEX, 32)])


def syntax_positives(g):
    out = []

    def add(fmt, text, secret):
        assert secret in text, (fmt, text, secret)
        out.append({"format": fmt, "text": text, "secret": secret})

    for fmt, templates in SYNTAX_TEMPLATES.items():
        for tmpl in templates:
            for _ in range(4):
                secret = g.mixed(ALNUM, g.rng.randint(16, 40))
                add(fmt, _fill(tmpl, g, secret), secret)
    for _ in range(4):
        for tmpl in CLI_TEMPLATES:
            secret = g.mixed(ALNUM, g.rng.randint(12, 28))
            add("command_line", _fill(tmpl, g, secret), secret)
    for _ in range(4):
        for tmpl in NETRC_TEMPLATES:
            secret = g.mixed(ALNUM, g.rng.randint(12, 28))
            add("netrc", _fill(tmpl, g, secret), secret)
    for _ in range(4):
        for fmt, templates in HTTP_TEMPLATES.items():
            for tmpl in templates:
                secret = g.mixed(URLSAFE, g.rng.randint(24, 40))
                if fmt == "authorization_basic":
                    secret = base64.b64encode(("%s:%s" % (g.s(LOWER, 6), g.password())).encode()).decode()
                add(fmt, _fill(tmpl, g, secret), secret)
        for fmt, templates in URL_TEMPLATES.items():
            for tmpl in templates:
                secret = g.mixed(URLSAFE, g.rng.randint(24, 44))
                add(fmt, _fill(tmpl, g, secret), secret)
        for fmt, templates in LOG_TEMPLATES.items():
            for tmpl in templates:
                secret = g.mixed(ALNUM, g.rng.randint(16, 32))
                add(fmt, _fill(tmpl, g, secret), secret)
    for vendor in VENDORS:
        for tmpl in g.rng.sample(VENDOR_TEMPLATES, 3):
            secret = g.mixed(ALNUM, g.rng.randint(20, 40))
            add("vendor_name_only", _fill(tmpl, g, secret, vendor=vendor), secret)
    for _ in range(8):
        secret = base64.b64encode(g.password().encode()).decode()
        text = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\ntype: Opaque\ndata:\n"
                "  %s: %s\n  username: %s\n" % (g.s(LOWER, 6), g.choice(["password", "tls.key", "token", "config"]),
                                                secret, base64.b64encode(g.s(LOWER, 5).encode()).decode()))
        add("kubernetes_secret_data", text, secret)
    for _ in range(4):
        secret = g.password(16)
        add("kubernetes_secret_data", "kind: Secret\nstringData:\n  db-url: %s\n" % secret, secret)
    # Repeated values: caught under a name, the later unnamed copy goes too.
    for tmpl in ["export API_TOKEN={s}\necho 'deploying with {s}'",
                 '{{"password": "{s}", "note": "rotated from {s} yesterday"}}',
                 "DB_PASSWORD={s} ./migrate\nlog: connected as app/{s}",
                 "client_secret: {s}\n# same as {s} in staging"]:
        for _ in range(3):
            secret = g.mixed(ALNUM, 24)
            text = tmpl.format(s=secret)
            out.append({"format": "repeated_value", "text": text, "secret": secret})
    return out


def syntax_negatives(g):
    out = []

    def add(kind, text):
        out.append({"kind": kind, "text": text})

    for _ in range(3):
        n = g.choice(SYNTAX_NAMES)
        for t in ["{n}: ${{{{ needs.vault.outputs.{n} }}}}", '{n} = "%s"', "{n}=%({n})s", '{n}: "{{}}"',
                  "{n} = '{{0}}'", "{n}: <b>hidden</b>", '{n} = "{{{{ .Values.{n} }}}}"', "{n}: %s",
                  '{n} := os.Getenv("{N}")', "var {n} string", '{n} := r.Header.Get("X-Api-Key")',
                  "${n} .= $salt;", "{N} ?= $(shell cat .secret)", '<{n}>${{env.{N}}}</{n}>',
                  'os.getenv("{N}", "")', 'getattr(settings, "{N}", None)', '("{n}", "email")',
                  "{N} ::= $({N})", "<{n}>{{{{ {n} }}}}</{n}>", '{n}: "${{{N}}}"']:
            add("template_or_code", t.format(n=n, N=n.upper()))
    for _ in range(20):
        n = g.choice(["password", "token", "secret", "api_key", "passphrase"])
        add("count_after_name", g.choice(["{n}:  {d} bytes", "{n}: {d} chars", "{n} = {d} characters long",
                                          "{n}: {d} remaining"]).format(n=n, d=g.rng.randint(1, 512)))
    classes = ["TokenService", "PasswordEncoder", "SecretManager", "AuthFilter", "KeyStoreLoader",
               "ApiKeyResolver", "CredentialStore", "TokenRefresher"]
    for _ in range(30):
        c = g.choice(classes)
        add("stack_frame", "\tat com.%s.%s.%s(%s.%s:%d)" % (g.s(LOWER, 5), c, g.choice(["run", "load", "get"]), c,
                                                            g.choice(["java", "kt", "scala"]), g.rng.randint(1, 999)))
    for _ in range(20):
        add("log_word", g.choice(["auth: user {d}", "auth: ok for {w} {d}", "token: expired at {d}",
                                  "password: changed by {w} {d}", "auth: session {d} closed"]).format(
            d=g.rng.randint(1, 99999), w=g.s(LOWER, 6)))
    for _ in range(4):
        for t in ["ssh -p {p} deploy@host", "docker run -p {p}:80 nginx", "mkdir -p build/{w}",
                  "openssl req -new -passout env:KEY_PASS -out a.csr", "aws configure set region us-east-{d}",
                  "npm config set registry https://registry.example.test/", 'curl -u "$USER:$TOKEN" https://x',
                  "ldapsearch -x -W -D cn=admin", "sshpass -e ssh host", "redis-cli -a $REDIS_PASSWORD ping",
                  "sqlcmd -S db -E -Q \"select 1\"", "pg_dump -p {p} app", "git push -u origin {w}",
                  "tar -p -xf a.tgz", "ps -p {p} -o pid=", "docker login -u bot --password-stdin"]:
            add("command_line", t.format(p=g.rng.randint(1000, 9999), w=g.s(LOWER, 6), d=g.rng.randint(1, 2)))
    for _ in range(4):
        for t in ["https://shop.example.test/items?code=SKU{d}", "https://x.test/search?key=created_at&sort=asc",
                  "https://maps.example.test/api?key=YOUR_API_KEY", "https://x.test/api?signal=strong{d}",
                  "https://x.test/p?design=flat&code=200", "GET /v1/items?key=name&order=desc",
                  "https://x.test/redirect?code=&state=abc", "http://localhost:3000/?code={w}"]:
            add("url", t.format(d=g.rng.randint(1000, 99999999), w=g.s(LOWER, 5)))
    for _ in range(4):
        for t in ['<add key="Timeout" value="{d}"/>', "<secretName>db-{w}</secretName>",
                  "<token-count>{d}</token-count>", "<passwordPolicy>strict</passwordPolicy>",
                  '<add key="ApiKeyHeader" value="X-Api-Key"/>', "<secret></secret>",
                  "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  workers: \"{d}\"",
                  "kind: Secret\ndata:\n  password: ${{DB_PASSWORD}}\n",
                  "machine api.example.test login bob", "the default login is admin",
                  'req.Header.Set("Content-Type", "application/json")',
                  'System.setProperty("java.awt.headless", "true");', 'props.put("password", "")',
                  'headers.set("x-api-key", apiKey);', 'String token = request.getHeader("X-Token");']:
            add("markup_or_call", t.format(d=g.rng.randint(1, 999), w=g.s(LOWER, 6)))
    for _ in range(30):
        add("random_id", g.choice(["request_id={h}", "trace: {h}", "etag: \"{h}\"", "build {h} passed",
                                   "{{\"id\": \"{h}\", \"key_count\": 3}}"]).format(h=g.s(HEX, g.choice([16, 32, 40]))))
    return out


# Rules whose example is more than the token (a command line or a URL around it) are walked by
# tests/test_redaction_rules.py instead.
FRAMED_RULES = {"mysql-password-flag", "curl-auth-user", "azure-sas-signature"}


def vendor_tokens(g):
    """Two tokens of every plain rule of the table in ordinary surroundings; every near miss."""
    pos, neg = [], []
    for rule in magihook.token_rules():
        if rule.id not in FRAMED_RULES and not rule.context and not rule.keep_prefix:
            for ctx in g.rng.sample(SHAPE_CONTEXTS, 2):
                token = magihook.token_example(rule, g.rng)
                pos.append({"format": "vendor:" + rule.id, "text": ctx.format(s=token), "secret": token})
        neg.append({"kind": "near_miss:" + rule.id, "text": rule.near_miss})
    return pos, neg


KEY_CREDENTIAL = ["api_key", "apiKey", "API_KEY", "x-api-key", "client_secret", "clientSecret", "password",
                  "db_password", "DB_PASS", "smtppass", "sessionid", "PHPSESSID", "auth_token", "access_token",
                  "refresh_token", "secret", "private_key", "signing_key", "passphrase", "Authorization",
                  "Cookie", "aws_secret_access_key", "connection_string", "webhook_secret", "oauth_token"]
KEY_NEUTRAL = ["max_tokens", "token_count", "tokenizer", "author", "keyboard", "session_id", "sort_key",
               "primary_key", "public_key", "key_count", "token_type", "password_file", "secret_name",
               "secretKeyRef", "input_tokens", "auth_method", "client_id", "name", "id", "path", "url",
               "cache_key", "partition_key", "foreign_key", "idempotency_key", "hotkey", "monkey",
               "password_min_length", "token_limit", "keyId", "key_name", "bypass", "compass", "passenger"]


def key_names(g):
    rows = [{"key": k, "credential": True} for k in KEY_CREDENTIAL]
    rows += [{"key": k, "credential": False} for k in KEY_NEUTRAL]
    for vendor in VENDORS:
        for suffix in ("Key", "_key", "_api_key", "_token", "_secret", "ApiKey"):
            rows.append({"key": vendor + suffix, "credential": True})
        for suffix in ("_url", "_region", "_timeout", "_enabled", "_key_id", "_user", "Name"):
            rows.append({"key": vendor + suffix, "credential": False})
    return rows



def negatives(g):
    out = []

    def add(kind, text):
        out.append({"kind": kind, "text": text})

    for _ in range(6):
        add("git_sha", "commit %s\nMerge: %s %s" % (g.s(HEX, 40), g.s(HEX, 7), g.s(HEX, 7)))
    for _ in range(3):
        add("git_sha", "git checkout %s && git log --oneline -1" % g.s(HEX, 40))
    for _ in range(5):
        u = g.s(HEX, 32)
        add("uuid", '{"session_id": "%s-%s-%s-%s-%s", "turn_id": "turn-3"}' % (u[:8], u[8:12], u[12:16], u[16:20], u[20:]))
    for _ in range(5):
        add("sha256", "%s  dist/app-1.2.3.tar.gz" % g.s(HEX, 64))
    for _ in range(3):
        add("sha512", "sha512sum: %s" % g.s(HEX, 128))
    for _ in range(6):
        digest = base64.b64encode(bytes(g.rng.randrange(256) for _ in range(64))).decode()
        add("integrity", '"integrity": "sha512-%s"' % digest)
    for _ in range(3):
        digest = base64.b64encode(bytes(g.rng.randrange(256) for _ in range(32))).decode()
        add("integrity", '<script src="app.js" integrity="sha256-%s" crossorigin="anonymous"></script>' % digest)
    for _ in range(5):
        add("docker_digest", "image: ghcr.io/acme/api@sha256:%s" % g.s(HEX, 64))
    for sentence in ["hello world, this is a perfectly ordinary sentence",
                     "The quick brown fox jumps over the lazy dog again and again",
                     '{"name": "demo", "version": "1.0.0", "private": true}',
                     "lorem ipsum dolor sit amet consectetur adipiscing elit"]:
        add("base64_prose", "payload=%s" % base64.b64encode(sentence.encode()).decode())
        add("base64_prose", "echo %s | base64 -d" % base64.b64encode(sentence.encode()).decode())
    for path in ["/home/dev/.cache/pip/wheels/ab/cd/ef0123456789abcdef0123456789abcdef0123456789/x.whl",
                 "/usr/lib/python3.11/site-packages/requests/adapters.py",
                 "C:\\Users\\dev\\AppData\\Local\\Temp\\build-artifacts\\output.log",
                 "src/components/authentication/TokenRefreshButton.test.tsx",
                 "/var/lib/docker/overlay2/%s/merged/etc/passwd" % g.s(HEX, 64),
                 "~/.config/gh/hosts.yml", "node_modules/@types/node/index.d.ts"]:
        add("path", "ls -la %s" % path)
    for v in ["1.2.3", "v2.0.0-rc.1+build.5", "0.0.1-alpha", "10.20.30"]:
        add("semver", '"version": "%s"' % v)
    code = [
        "def get_token(self):\n    return self._token",
        "if password is None:\n    raise ValueError('password required')",
        "password = getpass.getpass()",
        'api_key = os.environ["API_KEY"]',
        "token = request.headers.get('Authorization')",
        "const token = await getToken();",
        "self.token = token",
        "def login(self, username: str, password: str) -> bool:",
        "token: Optional[str] = None",
        "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
        "for key, value in settings.items():",
        "secret = load_secret(path)",
        "client = Client(api_key=api_key, timeout=30)",
        "login(user=user, password=password)",
        "if (!token) { throw new Error('missing token'); }",
        "private static final String TOKEN_HEADER = \"X-Auth-Token\";",
        "let key = map.get(&key).unwrap();",
        "password_field = forms.CharField(widget=forms.PasswordInput)",
        "assert tokenizer.decode(tokens) == text",
        "keyboard.press(Key.enter)",
        "git commit --author='Jane <jane@example.com>' -m 'fix auth flow'",
        "import { authorize } from './auth';",
        "return jwt.decode(token, key, algorithms=['HS256'])",
        "if token == expected_token: return True",
        "secretKeyRef:\n  name: db-credentials\n  key: password",
        "Password: SecretStr",
        "docker login --username bob --password-stdin registry.example.test",
    ]
    for c in code:
        add("code", c)
    for t in ["max_tokens=4096", '{"max_tokens": 4096, "input_tokens": 1234, "output_tokens": 56}',
              "token_count: 123", "tokens_used=456 tokenizer=cl100k_base", "author: Jane Doe",
              "authority: https://login.example.test", "keyboard: us", "sort_key=created_at",
              "primary_key: id", "key_count: 12", "session_id=abc-123", '{"tool_use_id": "toolu_01", "call_id": "call_abc123"}',
              "password_min_length=12", "token_type=bearer", "auth_method: oauth", "TOKEN_LIMIT=9000",
              "credential_helper=osxkeychain", "password_file=/run/secrets/db"]:
        add("counters_and_names", t)
    for t in ["password: ${DB_PASSWORD}", "export API_KEY=$API_KEY", "token: {{ secrets.GITHUB_TOKEN }}",
              "API_KEY=<your-api-key>", 'password: "***"', "PASSWORD=xxxx", "token: REDACTED",
              "password=", 'api_key: ""', "client_secret: %CLIENT_SECRET%", 'token = "${TOKEN}"',
              "export GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}", "password: <redacted:credential>",
              "--password $DB_PASS", "Authorization: Bearer ${TOKEN}", "secret: [REDACTED]",
              "auth_token: your-token-here", "password: null", "DB_PASSWORD=${DB_PASSWORD:-}"]:
        add("template_or_masked", t)
    for t in ["https://github.com/acme/repo/pull/42?tab=files#diff-abc",
              "ssh://git@github.com:22/acme/repo.git", "git@github.com:acme/repo.git",
              "https://user@example.test/path", "mailto:dev@example.com",
              "https://registry.npmjs.org/@babel/core/-/core-7.24.0.tgz",
              "http://[::1]:8080/health", "https://example.test:8443/api/v1/items?page=2&limit=50",
              "postgres://db.internal:5432/app", "npm install @types/node@20.11.0"]:
        add("url", t)
    for t in ["mkdir -p build/output && cp -r dist build/output", "ssh -p 2222 deploy@host",
              "python3 -m pytest -q -k 'token and not slow'", "task-management-service-v2-abcdefghijklmnop",
              "scikit-learn==1.3.0", "The bearer token is sent in the Authorization header.",
              "Use Bearer authentication for all requests.", "arn:aws:iam::123456789012:role/deploy",
              "AIDA is not a key prefix: AIDAJQABLZS4A3QDU576Q is a user id",
              "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
              "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZ2V0\n-----END CERTIFICATE-----",
              "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
              "ETag: W/\"5e15153d-120f\"", "X-Request-Id: 7f3c2a1e-9b8d-4c6f-a1b2-c3d4e5f60718",
              "Content-Type: application/json; charset=utf-8", "eyJhbGciOiJIUzI1NiJ9 is a header only",
              "skeleton-loader", "desk-lamp-2000-series-deluxe-edition"]:
        add("misc", t)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    g = Gen(SEED)
    pos = positives(g)
    neg = negatives(g)
    pos += syntax_positives(g)
    neg += syntax_negatives(g)
    vendor_pos, vendor_neg = vendor_tokens(g)
    pos += vendor_pos
    neg += vendor_neg
    keys = key_names(g)
    for name, rows in (("secrets_positive.jsonl", pos), ("secrets_negative.jsonl", neg),
                       ("secret_key_names.jsonl", keys)):
        with open(os.path.join(here, name), "w", encoding="utf-8", newline="\n") as f:
            for row in rows:
                f.write(json.dumps(row, sort_keys=True) + "\n")
    print("positives: %d (%d formats), negatives: %d, key names: %d"
          % (len(pos), len({r["format"] for r in pos}), len(neg), len(keys)))


if __name__ == "__main__":
    main()
