"""Verification of chaingate webhook deliveries (docs/webhooks.md#verifying-a-delivery).

Two schemes travel on every delivery; either proves it came from chaingate:

* chaingate's: ``X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(api_secret, "<t>.<raw body>")>``
  (and ``X-Webhook-Timestamp``, which must equal t when present);
* Standard Webhooks: ``webhook-id``, ``webhook-timestamp`` and ``webhook-signature: v1,<base64
  HMAC-SHA256(api_secret, "<id>.<timestamp>.<raw body>")>``.

The first is checked when present, else the second. Digests are compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import time
from decimal import Decimal
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

WEBHOOK_TOLERANCE_SECONDS = 300

_T = re.compile(r"^[0-9]{1,12}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")

_REASONS = {
    "missing": "is missing",
    "malformed": "is malformed",
    "expired": "is outside the time tolerance",
    "mismatch": "does not match",
}


class WebhookVerificationError(Exception):
    """A delivery that must be refused (answer 400). ``reason``: missing, malformed, expired or mismatch."""

    def __init__(self, reason: str) -> None:
        super().__init__("webhook signature %s" % _REASONS.get(reason, reason))
        self.reason = reason


HeadersLike = Union[Mapping[str, Any], Iterable[Tuple[str, Any]], Any]


def _normalise(headers: HeadersLike) -> Dict[str, List[str]]:
    """Lower-cased names to their values, from a dict, a framework's headers object, an
    http.server message or a WSGI/CGI environ (HTTP_X_WEBHOOK_SIGNATURE)."""
    items = headers.items() if hasattr(headers, "items") else headers
    out: Dict[str, List[str]] = {}
    for name, value in items:
        key = str(name).lower()
        if key.startswith("http_"):
            key = key[5:].replace("_", "-")
        values = value if isinstance(value, (list, tuple)) else [value]
        out.setdefault(key, []).extend("" if v is None else (v.decode("latin-1") if isinstance(v, bytes) else str(v)) for v in values)
    return out


def _single(headers: Dict[str, List[str]], name: str) -> Optional[str]:
    values = headers.get(name)
    if values is None or len(values) != 1:
        return None
    value = values[0].strip()
    return value or None


def _raw(body: Union[bytes, str]) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def webhook_signature_hex(secret: str, t: Union[int, str], raw_body: Union[bytes, str]) -> str:
    """Lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed with the apiSecret's UTF-8 bytes."""
    return hmac.new(secret.encode("utf-8"), str(t).encode("ascii") + b"." + _raw(raw_body), hashlib.sha256).hexdigest()


def standard_webhook_secret(secret: str) -> str:
    """The apiSecret in the form Standard Webhooks libraries take: whsec_ + base64 of its bytes."""
    return "whsec_" + base64.b64encode(secret.encode("utf-8")).decode("ascii")


def _check_time(t: str, tolerance: int, now: Optional[int]) -> None:
    current = int(time.time()) if now is None else int(now)
    if abs(current - int(t)) > tolerance:
        raise WebhookVerificationError("expired")


def _verify_chaingate(headers: Dict[str, List[str]], header: str, body: bytes, secret: str, tolerance: int, now: Optional[int]) -> None:
    t: Optional[str] = None
    candidates: List[str] = []
    for part in header.split(","):
        if "=" not in part:
            continue
        key, value = part.split("=", 1)
        key, value = key.strip(), value.strip()
        if key == "t":
            t = value
        elif key == "v1":
            candidates.append(value)
    if t is None or not _T.match(t) or not candidates:
        raise WebhookVerificationError("malformed")
    if "x-webhook-timestamp" in headers and _single(headers, "x-webhook-timestamp") != t:
        raise WebhookVerificationError("malformed")
    _check_time(t, tolerance, now)
    expected = webhook_signature_hex(secret, t, body)
    match = False
    for candidate in candidates:
        # Every candidate is compared (no early exit), each in constant time.
        if _HEX64.match(candidate) and hmac.compare_digest(expected, candidate):
            match = True
    if not match:
        raise WebhookVerificationError("mismatch")


def _verify_standard(headers: Dict[str, List[str]], header: str, body: bytes, secret: str, tolerance: int, now: Optional[int]) -> None:
    msg_id = _single(headers, "webhook-id")
    ts = _single(headers, "webhook-timestamp")
    candidates = [part[3:] for part in header.split(" ") if part.startswith("v1,")]
    if msg_id is None or ts is None or not _T.match(ts) or not candidates:
        raise WebhookVerificationError("malformed")
    _check_time(ts, tolerance, now)
    signed = msg_id.encode("utf-8") + b"." + ts.encode("ascii") + b"." + body
    expected = base64.b64encode(hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).digest()).decode("ascii")
    match = False
    for candidate in candidates:
        if hmac.compare_digest(expected.encode("ascii"), candidate.encode("ascii", "replace")):
            match = True
    if not match:
        raise WebhookVerificationError("mismatch")


def verify_webhook(
    headers: HeadersLike,
    raw_body: Union[bytes, str],
    secret: str,
    tolerance: int = WEBHOOK_TOLERANCE_SECONDS,
    now: Optional[int] = None,
) -> Dict[str, Any]:
    """Verify a delivery and return its event; raise WebhookVerificationError otherwise.

    ``raw_body`` must be the exact bytes received: never parse and re-serialise first. ``secret``
    is the merchant point's current apiSecret. Numbers with a fraction parse as Decimal, never
    float. Deduplicate on the returned event's ``id``: a retry or replay carries the same id.
    """
    normalised = _normalise(headers)
    body = _raw(raw_body)
    chaingate = _single(normalised, "x-webhook-signature")
    standard = _single(normalised, "webhook-signature")
    if chaingate is not None:
        _verify_chaingate(normalised, chaingate, body, secret, tolerance, now)
    elif standard is not None:
        _verify_standard(normalised, standard, body, secret, tolerance, now)
    else:
        raise WebhookVerificationError("missing")
    try:
        event = json.loads(body.decode("utf-8"), parse_float=Decimal)
    except ValueError:
        raise WebhookVerificationError("malformed") from None
    if not isinstance(event, dict):
        raise WebhookVerificationError("malformed")
    return event
