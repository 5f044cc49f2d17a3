"""Forwarding headers believed only from a proxy the operator named (the OWASP rule; uvicorn's
`--forwarded-allow-ips`): `ForwardedHeaders`, the ASGI middleware in front of the whole app.

From a trusted peer (EXPLORER_FORWARDED_ALLOW_IPS, or a Space's own proxy: `Config.proxies`) the client address
becomes the last address in X-Forwarded-For that no trusted proxy appended, the scheme X-Forwarded-Proto's, and
X-Forwarded-Host stays for the links (explorer/serving/reach.py). From anyone else the three headers are dropped before any
route reads them: the peer's own address counts, and links name the Host the browser used.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

FORWARDED = (b"x-forwarded-for", b"x-forwarded-host", b"x-forwarded-proto")


class Proxies:
    """The peers whose forwarding headers are believed: addresses or networks (CIDR), `*` for any."""

    def __init__(self, allowed: Iterable[str] = ()):
        allowed = tuple(allowed)
        self.any = "*" in allowed
        self.networks = [ipaddress.ip_network(a, strict=False) for a in allowed if a != "*"]

    def trusts(self, host: str) -> bool:
        if self.any:
            return True
        try:
            address = ipaddress.ip_address(host.strip().strip("[]"))
        except ValueError:
            return False
        return any(address.version == n.version and address in n for n in self.networks)

    def client(self, peer: str, forwarded_for: str) -> str:
        """The client a trusted `peer` forwarded: X-Forwarded-For read from the right, past the trusted proxies
        (the addresses to their left are the client's to write, and could be forged); the peer where none."""
        hops = [a.strip() for a in forwarded_for.split(",") if a.strip()]
        for hop in reversed(hops):
            if not self.trusts(hop):
                return hop
        return hops[0] if hops else peer


class ForwardedHeaders:
    """ASGI middleware: a trusted peer's X-Forwarded-For and -Proto applied to the request's client and scheme; an
    untrusted peer's forwarding headers removed."""

    def __init__(self, app, proxies: Proxies):
        self.app, self.proxies = app, proxies

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            scope = self.resolved(scope)
        await self.app(scope, receive, send)

    def resolved(self, scope: dict) -> dict:
        peer = scope.get("client")
        headers = scope.get("headers") or []
        if peer is None or not self.proxies.trusts(peer[0]):
            return {**scope, "headers": [(k, v) for k, v in headers if k.lower() not in FORWARDED]}
        found = {k.lower(): v.decode("latin-1") for k, v in headers if k.lower() in FORWARDED}
        scope = dict(scope)
        if b"x-forwarded-for" in found:
            scope["client"] = (self.proxies.client(peer[0], found[b"x-forwarded-for"]), 0)
        proto = found.get(b"x-forwarded-proto", "").split(",")[0].strip().lower()
        if proto in ("http", "https"):
            secure = proto == "https"
            scope["scheme"] = ("wss" if secure else "ws") if scope["type"] == "websocket" else proto
        return scope
