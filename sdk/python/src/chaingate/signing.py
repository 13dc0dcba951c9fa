"""Request signing for the chaingate gateway (docs/api.md#authentication).

The canonical string is t, METHOD, path (without the query string), the Idempotency-Key (writes
only) and the lowercase hex SHA-256 of the raw body, joined by LF. X-Signature is
``t=<unix seconds>,v1=<hex HMAC-SHA256(api_secret as UTF-8, canonical string as UTF-8)>``.
Serialise the body once and send exactly the bytes you signed: the server hashes what it receives.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from typing import Dict, Optional, Union

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

Body = Union[bytes, str, None]


def _bytes(body: Body) -> bytes:
    if body is None:
        return b""
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def sha256_hex(body: Body = b"") -> str:
    """Lowercase hex SHA-256 of the body's bytes (a str is taken as UTF-8)."""
    return hashlib.sha256(_bytes(body)).hexdigest()


def canonical_string(t: Union[int, str], method: str, path: str, idempotency_key: Optional[str], body_hash: str) -> str:
    """The lines the signature covers; a GET has no Idempotency-Key line (4 lines, a write 5)."""
    m = method.upper()
    lines = [str(t), m, path.split("?", 1)[0]]
    if m in WRITE_METHODS:
        lines.append(idempotency_key or "")
    lines.append(body_hash)
    return "\n".join(lines)


def hmac_hex(secret: str, message: str) -> str:
    """Lowercase hex HMAC-SHA256 keyed with the secret's UTF-8 bytes (never hex-decoded)."""
    return hmac.new(secret.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()


def sign_request(
    api_key: str,
    api_secret: str,
    method: str,
    path: str,
    body: Body = None,
    idempotency_key: Optional[str] = None,
    timestamp: Optional[int] = None,
) -> Dict[str, str]:
    """The headers of one signed request. Call it right before sending: t is "now".

    Writes get an Idempotency-Key (a fresh UUID unless given); a GET never sends or signs one.
    """
    m = method.upper()
    t = str(int(time.time()) if timestamp is None else int(timestamp))
    key = (idempotency_key or str(uuid.uuid4())) if m in WRITE_METHODS else None
    signature = hmac_hex(api_secret, canonical_string(t, m, path, key, sha256_hex(body)))
    headers = {
        "X-API-Key": api_key,
        "X-Signature": "t=%s,v1=%s" % (t, signature),
        "Accept": "application/json",
    }
    if _bytes(body):
        headers["Content-Type"] = "application/json"
    if key is not None:
        headers["Idempotency-Key"] = key
    return headers
