"""Hosts for the multi-host test: one network namespace per host, joined to the root
namespace by a veth pair on a bridge, and a PostgreSQL cluster of its own listening on
the bridge's address (tests.support.pg's cluster listens on 127.0.0.1 only, which no
namespace can reach).

    with network(3) as net:               # net.namespaced: False where `ip netns` is refused
        with bridge_cluster(net) as pg:   # pg.url: postgresql://postgres@10.77.N.1:PORT/postgres
            net.hosts[0].wrap([...])      # the command, run inside that host's namespace
            net.cut(net.hosts[1])         # its link down: the database is unreachable from it
            net.restore(net.hosts[1])

Names are unique per run (a run's tag in every namespace and link name) and everything
made is removed in a `finally`, whatever failed. Where namespaces are not permitted (not
root, a container without CAP_SYS_ADMIN) the hosts are plain processes on 127.0.0.1 and
a link cut is emulated by pg_terminate_backend of that host's connections (each host's
URL names it as application_name); `net.namespaced` tells the test, which says so.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support import pg
from tests.support.procs import HOST as LOOPBACK
from tests.support.waits import bound

IP = shutil.which("ip") or "/usr/sbin/ip"
SUBNET_BASE = "10.77"  # 10.77.N.0/24, N chosen so that no address of this machine is in it
FORCE_PLAIN_ENV = "PLANNING_MCP_NETNS"  # "off": plain processes even where namespaces work (to try the fallback)


class NetworkError(RuntimeError):
    """A namespace, link or address could not be set up; the message has ip's words."""


def _ip(*args: str, netns: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [IP, *(["-n", netns] if netns else []), *args]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=bound(20))
    if check and done.returncode != 0:
        raise NetworkError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def namespaces_permitted() -> tuple[bool, str]:
    """Whether this process may make namespaces and links (a real attempt, undone), and
    why not when it may not."""
    if os.environ.get(FORCE_PLAIN_ENV) == "off":
        return False, f"{FORCE_PLAIN_ENV}=off"
    if os.geteuid() != 0:
        return False, "not root"
    probe = f"pmprobe{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return False, made.stderr.strip() or "ip netns add failed"
    _ip("netns", "del", probe, check=False)
    link = _ip("link", "add", probe, "type", "bridge", check=False)
    if link.returncode != 0:
        return False, link.stderr.strip() or "ip link add failed"
    _ip("link", "del", probe, check=False)
    return True, ""


def _free_subnet() -> ipaddress.IPv4Network:
    used = [
        ipaddress.ip_interface(word)
        for line in _ip("-4", "-o", "addr", "show").stdout.splitlines()
        for before, word in zip(line.split(), line.split()[1:], strict=False)
        if before == "inet"
    ]
    for n in [*range(os.getpid() % 200 + 20, 255), *range(1, 255)]:
        net = ipaddress.IPv4Network(f"{SUBNET_BASE}.{n}.0/24")
        if not any(addr.ip in net for addr in used):
            return net
    raise NetworkError(f"no free {SUBNET_BASE}.N.0/24 subnet on this machine")


@dataclass
class Host:
    index: int
    address: str  # where its server's connections to the database come from
    netns: str | None  # None: a plain process in the root namespace (the fallback)
    veth_root: str = ""  # the bridge's end of its link
    veth_ns: str = ""  # the namespace's end (cut this one: its route goes with it)

    @property
    def name(self) -> str:
        return f"host{self.index}"

    def wrap(self, cmd: list[str]) -> list[str]:
        """`cmd` run inside this host's namespace (as is in the fallback)."""
        return ["ip", "netns", "exec", self.netns, *cmd] if self.netns else cmd

    def database_url(self, url: str) -> str:
        """`url` naming this host as application_name, so its connections can be told apart."""
        return f"{url}{'&' if '?' in url else '?'}application_name=planning-mcp-{self.name}"


@dataclass
class Network:
    namespaced: bool
    why_not: str  # why namespaces are not used (empty when they are)
    gateway: str  # the root namespace's address the hosts reach: where PostgreSQL listens
    subnet: str  # the hosts' addresses, for pg_hba.conf
    hosts: list[Host] = field(default_factory=list)
    bridge: str = ""

    def describe(self) -> str:
        """What the hosts are, for the test's output: a fallback must be visible there."""
        if self.namespaced:
            return (
                f"{len(self.hosts)} hosts in network namespaces on bridge {self.bridge}; PostgreSQL at {self.gateway}"
            )
        return (
            f"NETWORK NAMESPACES NOT PERMITTED ({self.why_not}): the {len(self.hosts)} hosts are plain processes "
            f"on {LOOPBACK}, and a cut link is emulated by terminating that host's database connections"
        )

    def cut(self, host: Host, cluster: BridgeCluster) -> None:
        """The host's link down: nothing it sends reaches the database (new connections
        fail at once, open ones stall) until restore(). Fallback: its connections are
        terminated, the nearest a plain process comes to a cut link."""
        if host.netns:
            _ip("link", "set", host.veth_ns, "down", netns=host.netns)
        else:
            cluster.terminate_application(f"planning-mcp-{host.name}")

    def restore(self, host: Host) -> None:
        if host.netns:
            _ip("link", "set", host.veth_ns, "up", netns=host.netns)


@contextlib.contextmanager
def network(count: int) -> Iterator[Network]:
    """`count` hosts, each in a namespace of its own on one bridge (or plain processes
    where namespaces are refused); removed again on the way out, whatever happened."""
    permitted, why_not = namespaces_permitted()
    if not permitted:
        yield Network(False, why_not, LOOPBACK, f"{LOOPBACK}/32", [Host(i, LOOPBACK, None) for i in range(count)])
        return
    tag = uuid.uuid4().hex[:6]
    subnet = _free_subnet()
    addresses = list(subnet.hosts())
    gateway = str(addresses[0])
    net = Network(True, "", gateway, str(subnet), bridge=f"pmb{tag}")
    made_links: list[str] = []
    made_ns: list[str] = []
    try:
        _ip("link", "add", net.bridge, "type", "bridge")
        made_links.append(net.bridge)
        _ip("addr", "add", f"{gateway}/{subnet.prefixlen}", "dev", net.bridge)
        _ip("link", "set", net.bridge, "up")
        for i in range(count):
            host = Host(i, str(addresses[10 + i]), f"pm{tag}h{i}", f"pm{tag}r{i}", f"pm{tag}n{i}")
            _ip("netns", "add", str(host.netns))
            made_ns.append(str(host.netns))
            _ip("link", "add", host.veth_root, "type", "veth", "peer", "name", host.veth_ns)
            made_links.append(host.veth_root)  # deleting one end deletes the pair
            _ip("link", "set", host.veth_ns, "netns", str(host.netns))
            _ip("link", "set", host.veth_root, "master", net.bridge)
            _ip("link", "set", host.veth_root, "up")
            _ip("link", "set", "lo", "up", netns=host.netns)
            _ip("addr", "add", f"{host.address}/{subnet.prefixlen}", "dev", host.veth_ns, netns=host.netns)
            _ip("link", "set", host.veth_ns, "up", netns=host.netns)
            net.hosts.append(host)
        yield net
    finally:
        for name in reversed(made_ns):
            _ip("netns", "del", name, check=False)
        for link in reversed(made_links):
            _ip("link", "del", link, check=False)


class BridgeCluster(pg.Cluster):
    """pg.Cluster listening on the bridge's address (and 127.0.0.1) instead of 127.0.0.1
    only: the one thing pg.Cluster cannot be told. Its restart() is pg.Cluster's."""

    def __init__(self, url: str, datadir: Path, port: int, listen: str) -> None:
        super().__init__(url, datadir, port)
        self.listen = listen

    def _pg_ctl(self, *args: str) -> None:
        assert self.datadir is not None
        options = (
            f"-p {self.port} -k {self.datadir.parent} -c listen_addresses={self.listen} "
            "-c fsync=off -c full_page_writes=off -c max_connections=200"
        )
        cmd = [str(pg.PG_BIN / "pg_ctl"), *args, "-w", "-t", str(pg.START_TIMEOUT), "-D", str(self.datadir)]
        if args[0] in ("start", "restart"):
            cmd += ["-o", options, "-l", str(self.datadir.parent / "server.log")]
        pg.run_as_server(cmd)

    def terminate_application(self, application_name: str) -> int:
        return pg.terminate_where(self.url, "application_name = %s", application_name)

    def log(self) -> str:
        assert self.datadir is not None
        path = self.datadir.parent / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def bridge_cluster(net: Network) -> Iterator[BridgeCluster]:
    """A throwaway cluster (initdb as the unprivileged user, as tests.support.pg does)
    that the hosts may reach: listening on the gateway, trusting the hosts' subnet."""
    top = Path(tempfile.mkdtemp(prefix="pgmultihost-"))
    if os.geteuid() == 0:
        shutil.chown(top, user=pg.RUN_AS)
    datadir = top / "data"
    started: BridgeCluster | None = None
    try:
        pg.run_as_server(
            [str(pg.PG_BIN / "initdb"), "-D", str(datadir), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]
        )
        with (datadir / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {net.subnet} trust\n")
        listen = ",".join(dict.fromkeys([net.gateway, LOOPBACK]))
        for _ in range(5):  # the free port may be taken between the probe and the bind
            port = pg.free_port()
            found = BridgeCluster(f"postgresql://postgres@{net.gateway}:{port}/postgres", datadir, port, listen)
            try:
                found.start()
            except pg.ClusterError:
                continue
            started = found
            break
        if started is None:
            raise pg.ClusterError(f"the multi-host cluster in {top} did not start; see {top / 'server.log'}")
        yield started
    finally:
        if started is not None:
            with contextlib.suppress(pg.ClusterError):
                started._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(top, ignore_errors=True)
