"""Who can reach this server, and which address a link should name so that other devices (students' phones) can
open it, and when none can.

Who: `is_public` (a public deployment: `--public`, EXPLORER_PUBLIC or a Space) and `is_loopback` (an address only
this machine reaches). Which address (`base_url`): a share tunnel's or a Space's public URL first; else the address
the visitor's browser used, unless that is loopback: then this machine's local network address where the server
listens on every interface (`--host 0.0.0.0`); else the loopback address, with a warning saying how to fix it.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping

from explorer.config import Config, current

LOOPBACK_WARNING = (
    "This link names this computer only (127.0.0.1): other devices, students' phones among them, cannot open it. "
    "Restart with --host 0.0.0.0 (then links name this computer's address on the local network) or --share "
    "(a public link)."
)
EVERY_INTERFACE = ("0.0.0.0", "::", "")
LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
HOST = re.compile(rf"(?:{LABEL}\.)*{LABEL}\.?|\[[0-9A-Fa-f:.]{{2,45}}\]")  # a DNS name, an IPv4 or an [IPv6] address
HOST_PORT = re.compile(r"(?P<name>\[[^\]]*\]|[^:\[\]]*)(?::(?P<port>[0-9]{1,5}))?")
MAX_HOST = 253  # characters of a DNS name


def host_header(value: str | None) -> str | None:
    """`value` where it is a host name, or one with a port (`name:port`); else None (too long, not a host)."""
    found = HOST_PORT.fullmatch(value or "")
    if found is None or len(found["name"]) > MAX_HOST or not HOST.fullmatch(found["name"]):
        return None
    return value if found["port"] is None or 0 < int(found["port"]) < 65536 else None


def is_public(flag: bool | None = None, config: Config | None = None) -> bool:
    """Whether this is a public deployment: `--public`, else EXPLORER_PUBLIC (1/0), else on a Hugging Face Space
    (`config`'s word: default, the configuration in force)."""
    return bool(flag) or (config or current()).public


def is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def base_url(
    headers: Mapping[str, str], scheme: str, bind_host: str | None, public_url: str | None
) -> tuple[str, str | None]:
    """(the scheme://host[:port] links should start with, a warning or None); `headers` the request's."""
    if public_url:
        return public_url.rstrip("/"), None
    proto = (headers.get("x-forwarded-proto") or "").split(",")[0].strip().lower()
    proto = proto if proto in ("http", "https") else scheme
    forwarded = (
        (headers.get("x-forwarded-host") or "").split(",")[0].strip()
    )  # a trusted proxy's (explorer/api/proxy.py)
    host = host_header(forwarded) or host_header(headers.get("host")) or "127.0.0.1"  # no host name: the server's own
    name, _, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
    if not is_loopback(name.strip("[]")):
        return f"{proto}://{host}", None
    if bind_host in EVERY_INTERFACE:
        lan = lan_address()
        if lan:
            return f"{proto}://{lan}{':' + port if port else ''}", None
    return f"{proto}://{host}", LOOPBACK_WARNING


def lan_address() -> str | None:
    """This machine's address on its local network (the route a packet would take; none is sent), or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))  # UDP: connect() sends nothing, it only picks the interface
        ip = s.getsockname()[0]
        return None if ip.startswith("127.") else ip
    except OSError:
        return None
    finally:
        s.close()


def qr_code(url: str, kind: str = "svg") -> bytes | None:
    """The QR code of `url`, black on white with a quiet zone of 2 modules: an SVG element (4 px a module, titled)
    or a PNG (10 px a module); None where the link is too long for one (past 2,331 characters), never an error."""
    import io

    import segno

    try:
        code = segno.make(url, error="m")
    except segno.DataOverflowError:
        return None
    buf = io.BytesIO()
    extra = {"xmldecl": False, "svgns": True, "title": "QR code of the link"} if kind == "svg" else {}
    code.save(buf, kind=kind, scale=4 if kind == "svg" else 10, border=2, dark="#000", light="#fff", **extra)
    return buf.getvalue()
