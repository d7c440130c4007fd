"""The SSRF guard of page fetching.

Result URLs come from the open web, so fetching them must not reach the machine's own
network: only http/https; every address a host resolves to must be public — loopback,
private, link-local, shared (CGNAT), reserved, multicast and cloud metadata addresses
are refused unless ``web.allow_private_hosts`` names the host or a network containing
the address.

IPv6 addresses that carry an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``,
IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo
``2001::/32``) are judged by the IPv4 rules as well, so ``[64:ff9b::7f00:1]`` is
loopback; the NAT64 local-use prefix ``64:ff9b:1::/48`` is refused outright (where its
IPv4 address sits depends on the operator's prefix length). Hosts spelled as legacy
IPv4 numbers (``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``127.1``) are read as the
address every resolver reads them as, without asking DNS.

The check runs where the connection is made (an httpcore network backend), for every
connection including each redirect hop, and the connection goes to the address that
was checked — so a DNS answer that changes between check and connect (rebinding) cannot
slip through. :meth:`HostPolicy.check_url` repeats the checks that need no DNS before
each request, so a literal address is refused before anything is sent.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
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


_REFUSED_V4: tuple[ipaddress.IPv4Network, ...] = tuple(ipaddress.IPv4Network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
))
"""IANA's special-purpose IPv4 blocks that are not reachable public unicast. Python's
``is_global`` tables differ between versions, so the guard names them itself."""

_GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")
_REFUSED_V6: tuple[ipaddress.IPv6Network, ...] = tuple(ipaddress.IPv6Network(n) for n in (
    "2001::/23", "2001:db8::/32", "3fff::/20",
))
"""Special-purpose blocks inside 2000::/3 (protocol assignments incl. Teredo,
documentation). Everything outside 2000::/3 is refused too — including the NAT64
local-use prefix 64:ff9b:1::/48 — except the IPv4 spellings (mapped, compatible) and
the NAT64 well-known prefix, which are judged by the IPv4 address they carry."""

_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")

_MAX_HOST_CHARS = 253
_NUMBER = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)")


def _legacy_ipv4_part(part: str) -> int:
    if part.startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)  # ValueError for 8 or 9: not an address
    return int(part, 10)


def parse_ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address of a host written in any numeric form resolvers accept
    (``inet_aton``: 1–4 parts, each decimal, octal with a leading 0 or hex with 0x; the
    last part fills the remaining bytes), or None when ``host`` is a name.

    As in the WHATWG URL standard, a host whose last label is a number is an address:
    one that does not parse (``256.1.1.1``, ``08.1.1.1``, ``1.2.3.4.5``) raises
    :class:`UnsafeURLError` (no DNS name ends in a number, so it is never a name)."""
    labels = _numeric_labels(host)
    if labels is None:
        return None
    value = _ipv4_value(labels)
    if value is None:
        raise UnsafeURLError(f"refused host {host[:80]}: invalid IPv4 address")
    return ipaddress.IPv4Address(value)


def _numeric_labels(host: str) -> list[str] | None:
    """The labels of ``host`` (NFKC, lower case, a trailing dot dropped) when the last is
    a number; None for a name, or a host too long to be either."""
    h = unicodedata.normalize("NFKC", host[: _MAX_HOST_CHARS + 1]).lower()
    labels = h.split(".")
    if len(labels) > 1 and not labels[-1]:
        labels.pop()
    if len(h) > _MAX_HOST_CHARS or not _NUMBER.fullmatch(labels[-1]):
        return None
    return labels


def _ipv4_value(labels: list[str]) -> int | None:
    """The 32-bit address 1–4 numeric labels spell as ``inet_aton`` reads them, or None
    when they spell none."""
    if len(labels) > 4 or not all(_NUMBER.fullmatch(label) for label in labels):
        return None
    try:
        numbers = [_legacy_ipv4_part(label) for label in labels]
    except ValueError:
        return None
    *head, last = numbers
    if any(n > 0xFF for n in head) or last >= 1 << (8 * (5 - len(numbers))):
        return None
    value = last
    for i, n in enumerate(head):
        value |= n << (8 * (3 - i))
    return value


def literal_address(host: str) -> IPAddress | None:
    """The address a host names without DNS (an IP literal in any spelling), else None."""
    bare = host.strip("[]")
    if ":" in bare:
        try:
            return ipaddress.IPv6Address(bare)
        except ValueError:
            return None
    return parse_ipv4_literal(bare)


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries: mapped, compatible, NAT64 (/96),
    6to4, and Teredo's server and (de-obfuscated) client."""
    if address in _IPV4_MAPPED or address in _NAT64 or (
            address in _IPV4_COMPATIBLE and int(address) > 1):
        return [ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)]
    if address.sixtofour is not None:
        return [address.sixtofour]
    if address.teredo is not None:
        server, client = address.teredo
        return [client, server]
    return []


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
        """The checks that need no DNS (scheme, host, literal addresses in any spelling);
        returns (host, port)."""
        scheme, host, port = _scheme_host_port(url)
        if host in METADATA_HOSTS and host not in self.allowed_hosts:
            raise UnsafeURLError(f"refused host {host}: cloud metadata service")
        literal = literal_address(host)
        if literal is not None:
            self.check_address(host, literal)
        return host, port or (443 if scheme == "https" else 80)

    def check_address(self, host: str, address: IPAddress) -> None:
        """Raise :class:`UnsafeURLError` unless ``address`` (of ``host``) may be reached.

        An IPv6 address carrying IPv4 must pass the IPv4 rules for every address it
        carries; mapped and compatible forms are only a spelling of the IPv4 address, the
        others must also pass the IPv6 rules themselves."""
        if host in self.allowed_hosts:
            return
        if isinstance(address, ipaddress.IPv4Address):
            self._check_one(host, address)
            return
        embedded = embedded_ipv4(address)
        spelling_only = bool(embedded) and (address in _IPV4_MAPPED or
                                            address in _IPV4_COMPATIBLE)
        if not spelling_only and address not in _NAT64:
            self._check_one(host, address)
        for ip in embedded:
            self._check_one(host, ip, via=None if spelling_only else address)

    def _check_one(self, host: str, ip: IPAddress, via: IPAddress | None = None) -> None:
        shown = f"{ip} (in {via})" if via is not None else str(ip)
        if ip in METADATA_ADDRESSES:
            # allowed only when named itself, not for being inside an allowed network
            if not self._allowed(ip, single=True):
                raise UnsafeURLError(f"refused host {host}: {shown} is a cloud metadata address")
            return
        kind = None if self._allowed(ip) else _refusal(ip)
        if kind is not None:
            raise UnsafeURLError(f"refused host {host}: {shown} is {kind}")

    def _allowed(self, ip: IPAddress, *, single: bool = False) -> bool:
        """Does ``web.allow_private_hosts`` name a network holding ``ip`` (with
        ``single``: a network of that one address)?"""
        return any(ip in net and (not single or net.num_addresses == 1)
                   for net in self.allowed_networks if net.version == ip.version)

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The host's addresses, each checked; raises if any is refused."""
        literal = literal_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except OSError as exc:
                raise UnsafeURLError(f"cannot resolve host {host}: {exc.strerror or exc}"
                                     ) from exc
            addresses = list(dict.fromkeys(
                ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))
        if not addresses:
            raise UnsafeURLError(f"cannot resolve host {host}")
        for address in addresses:
            self.check_address(host, address)
        return addresses


def _scheme_host_port(url: str) -> tuple[str, str, int | None]:
    """The scheme (http or https), lower-case host and port of ``url``;
    :class:`UnsafeURLError` for a URL that is not one, another scheme or no host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UnsafeURLError(f"invalid URL: {url[:200]}") from exc
    scheme = (parts.scheme or "").lower()
    if scheme not in ALLOWED_SCHEMES:
        raise UnsafeURLError(f"refused scheme {scheme or '(none)'!r}: only http and https")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise UnsafeURLError("refused URL without a host")
    return scheme, host, port


def _refusal(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public unicast address (None when it is one)."""
    if ip.is_multicast:
        return "a multicast address"
    if isinstance(ip, ipaddress.IPv4Address):
        refused = any(ip in net for net in _REFUSED_V4)
    else:
        refused = (ip not in _GLOBAL_UNICAST_V6 and ip not in _NAT64) \
            or any(ip in net for net in _REFUSED_V6)
    if not refused and ip.is_global:
        return None
    return _kind(ip)


def _kind(ip: IPAddress) -> str:
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_private:
        return "a private address"
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
