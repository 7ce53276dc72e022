"""Store URLs taken apart without resolving them: which backend a `--store` value names,
a `postgresql://` URL in libpq's forms, and the same URL safe to print. A leaf: it imports
nothing of planning_core, so the composition root (stores/__init__.py) and the database
backend share it without one importing the other."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

DATABASE_SCHEMES = ("postgresql", "postgres")
MEMORY_URL = "memory:"


def is_database_url(url: str) -> bool:
    return urlsplit(url).scheme in DATABASE_SCHEMES


MULTI_HOST_ATTRS = ("target_session_attrs", "read-write")  # several hosts: connect to the primary only
DEFAULT_PORT = "5432"


def is_secret_param(key: str) -> bool:
    """libpq's secret connection parameters (password, sslpassword): never printed."""
    return key.lower().endswith("password")


# libpq's other form, `host=localhost dbname=x password=secret`: a connection string of
# keyword=value pairs, whose first word is one of libpq's keywords (a folder would be taken
# for it otherwise, and an empty store served). Only the URL form is accepted.
_CONNINFO_START = re.compile(
    r"\s*(?:host|hostaddr|port|dbname|user|password|passfile|service|sslmode|options|connect_timeout"
    r"|application_name|target_session_attrs|sslcert|sslkey|sslrootcert|sslpassword|gssencmode)\s*=",
    re.IGNORECASE,
)
_CONNINFO_PAIR = re.compile(r"(\w+)(\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)")


def is_conninfo(text: str) -> bool:
    """`text` is a libpq keyword=value connection string (not a URL, not a folder)."""
    return bool(_CONNINFO_START.match(text))


def redact_conninfo(text: str) -> str:
    """A keyword=value connection string with every secret's value replaced by ***."""
    return _CONNINFO_PAIR.sub(
        lambda m: m.group(1) + m.group(2) + ("***" if is_secret_param(m.group(1)) else m.group(3)), text
    )


@dataclass(frozen=True)
class DatabaseUrl:
    """A `postgresql://` URL taken apart without resolving it, in libpq's forms: one host
    or several (`u:pw@h1:p1,h2:p2/db`), `[ipv6]`, and `?host=`/`?port=`/`?dbname=`, which
    win over the URL's own parts as in libpq. Any text parses (psycopg judges it when
    connecting); `problem` says what is plainly wrong."""

    text: str  # the URL as given
    scheme: str
    user: str
    password: str | None
    hosts: tuple[tuple[str, str], ...]  # (host, port as written; "" for the default)
    path: str
    query: tuple[tuple[str, str | None], ...]  # key, value (None: no "=")

    @classmethod
    def parse(cls, url: str) -> DatabaseUrl:
        scheme, _, rest = url.partition("://")
        rest, _, query_text = rest.partition("?")
        rest = rest.split("#", 1)[0]
        netloc, slash, path = rest.partition("/")
        userinfo, _, hostlist = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        query = tuple(
            (k, v if sep else None) for k, sep, v in (item.partition("=") for item in query_text.split("&") if item)
        )
        return cls(
            url,
            scheme,
            unquote(user),
            unquote(password) if colon else None,
            tuple(_host_port(spec) for spec in hostlist.split(",")) if hostlist else (),
            slash + path,
            query,
        )

    def param(self, key: str) -> str | None:
        found = [v for k, v in self.query if k == key]
        return found[-1] if found else None

    @property
    def secret(self) -> str | None:
        """The password, from the URL or its query, to be scrubbed from messages."""
        return self.param("password") or self.password

    @property
    def servers(self) -> list[tuple[str, str]]:
        """(host, port) of every server libpq will try, in order."""
        hosts_param, ports_param = self.param("host"), self.param("port")
        hosts = [h for h, _ in self.hosts] if hosts_param is None else unquote(hosts_param).split(",")
        ports = [p for _, p in self.hosts] if ports_param is None else unquote(ports_param).split(",")
        if len(ports) == 1:
            ports = ports * len(hosts)
        ports += [""] * (len(hosts) - len(ports))
        return [(h or "localhost", p or DEFAULT_PORT) for h, p in zip(hosts or [""], ports or [""], strict=False)]

    @property
    def several_hosts(self) -> bool:
        return len(self.servers) > 1

    @property
    def dbname(self) -> str:
        return self.param("dbname") or unquote(self.path[1:]) or self.param("user") or self.user or "(default)"

    @property
    def where(self) -> str:
        """For people: `plans on db:5432`, `plans on h1:5432,h2:5433`; never a password."""
        return f"{self.dbname} on {','.join(f'{h}:{p}' for h, p in self.servers)}"

    def problem(self) -> str | None:
        if not self.hosts and self.param("host") is None:
            return "names no host"
        for _, port in self.servers:
            if not port.isdigit() or not 0 < int(port) < 65536:
                return f"has the port {port!r}, which is not a number from 1 to 65535"
        return None

    def shown(self) -> str:
        """The URL with every secret (`user:pw@`, `?password=`, `?sslpassword=`) as ***."""
        userinfo = ""
        if self.user or self.password is not None:
            userinfo = quote(self.user, safe="") + (":***" if self.password is not None else "") + "@"
        hostlist = ",".join(h + (f":{p}" if p else "") for h, p in self.hosts)
        query = "&".join(k if v is None else f"{k}=***" if is_secret_param(k) else f"{k}={v}" for k, v in self.query)
        return f"{self.scheme}://{userinfo}{hostlist}{self.path}" + (f"?{query}" if query else "")

    def with_param(self, key: str, value: str) -> str:
        """The URL with `key=value` added to its query."""
        base, _, fragment = self.text.partition("#")
        joined = base + ("&" if "?" in base else "?") + f"{key}={value}"
        return joined + (f"#{fragment}" if fragment else "")


def _host_port(spec: str) -> tuple[str, str]:
    if spec.startswith("["):  # [ipv6]:port
        host, _, after = spec.partition("]")
        return host + "]", after.removeprefix(":")
    host, _, port = spec.partition(":")
    return unquote(host), port


def redact(url: str) -> str:
    """The URL (or libpq keyword=value string) with every secret replaced by ***: safe to
    print (DatabaseUrl.shown)."""
    if is_conninfo(url):
        return redact_conninfo(url)
    return DatabaseUrl.parse(url).shown() if is_database_url(url) else url


def database_url(url: str) -> str:
    """The URL a database store connects with: several hosts get
    target_session_attrs=read-write unless the URL says otherwise, so that the pools and
    the change feed only ever reach the primary (and find the new one after a failover)."""
    parsed = DatabaseUrl.parse(url)
    key, value = MULTI_HOST_ATTRS
    if not parsed.several_hosts or parsed.param(key) is not None:
        return url
    import logging  # here: the Claude Code hook reads a URL at every call, and logs nothing

    log = logging.getLogger("planning_mcp")
    log.warning("the store URL %s names several hosts: connecting with %s=%s", parsed.shown(), key, value)
    return parsed.with_param(key, value)
