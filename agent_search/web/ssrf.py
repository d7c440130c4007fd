"""The SSRF guard of page fetching.

Result URLs come from the open web, so fetching them must not reach the machine's own
network: only http/https; every address a host resolves to must be public — loopback,
private, link-local, shared (CGNAT), reserved, multicast and cloud metadata addresses
are refused unless ``web.allow_private_hosts`` names the host or a network containing
the address.

The check runs where the connection is made (an httpcore network backend), for every
connection including each redirect hop, and the connection goes to the address that
was checked — so a DNS answer that changes between check and connect (rebinding) cannot
slip through.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import anyio
import httpcore

from agent_search.web.errors import UnsafeURLError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
    "169.254.170.2",    # AWS ECS task metadata
    "fd00:ec2::254",    # AWS IPv6
    "100.100.100.200",  # Alibaba Cloud
    "192.0.0.192",      # Oracle Cloud
))
METADATA_HOSTS: frozenset[str] = frozenset({
    "metadata.google.internal", "metadata", "instance-data", "instance-data.ec2.internal",
})
ALLOWED_SCHEMES = ("http", "https")


class HostPolicy:
    """Which hosts and addresses a fetch may reach."""

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.allowed_hosts: set[str] = set()
        self.allowed_networks: list[IPNetwork] = []
        for entry in allow:
            entry = entry.strip().lower()
            if not entry:
                continue
            try:
                self.allowed_networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self.allowed_hosts.add(entry.strip("[]"))

    def check_url(self, url: str) -> tuple[str, int]:
        """Scheme and host checks that need no DNS; returns (host, port)."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise UnsafeURLError(f"invalid URL: {url[:200]}") from None
        scheme = (parts.scheme or "").lower()
        if scheme not in ALLOWED_SCHEMES:
            raise UnsafeURLError(f"refused scheme {scheme or '(none)'!r}: only http and https")
        host = (parts.hostname or "").lower().rstrip(".")
        if not host:
            raise UnsafeURLError("refused URL without a host")
        if host in METADATA_HOSTS and host not in self.allowed_hosts:
            raise UnsafeURLError(f"refused host {host}: cloud metadata service")
        return host, port or (443 if scheme == "https" else 80)

    def check_address(self, host: str, address: IPAddress) -> None:
        """Raise :class:`UnsafeURLError` unless ``address`` (of ``host``) may be reached."""
        ip = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) and \
            address.ipv4_mapped else address
        if host in self.allowed_hosts or str(ip) in self.allowed_hosts:
            return
        explicitly_allowed = any(ip in net for net in self.allowed_networks
                                 if net.version == ip.version)
        if ip in METADATA_ADDRESSES:
            if explicitly_allowed and any(net.num_addresses == 1 for net in self.allowed_networks
                                          if ip in net):
                return
            raise UnsafeURLError(f"refused host {host}: {ip} is a cloud metadata address")
        if explicitly_allowed:
            return
        if not ip.is_global or ip.is_multicast:
            raise UnsafeURLError(f"refused host {host}: {ip} is {_kind(ip)}")

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The host's addresses, each checked; raises if any is refused."""
        try:
            literal: IPAddress | None = ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [literal]
        else:
            try:
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise UnsafeURLError(f"cannot resolve host {host}: {exc.strerror or exc}"
                                     ) from None
            addresses = list(dict.fromkeys(
                ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))
        if not addresses:
            raise UnsafeURLError(f"cannot resolve host {host}")
        for address in addresses:
            self.check_address(host, address)
        return addresses


def _kind(ip: IPAddress) -> str:
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
    if ip.is_multicast:
        return "a multicast address"
    return "not a public address"


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend, but every TCP connection first resolves the host,
    checks every address against the policy, and connects to a checked address."""

    def __init__(self, policy: HostPolicy) -> None:
        self.policy = policy
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        addresses = await self.policy.resolve(host.lower().rstrip("."), port)
        last: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(str(address), port, timeout=timeout,
                                                     local_address=local_address,
                                                     socket_options=socket_options)
            except httpcore.ConnectError as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        raise UnsafeURLError("refused: unix sockets are not fetched")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
