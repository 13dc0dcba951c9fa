"""A client of the chaingate merchant gateway (/api/v1), standard library only.

Every attempt is signed when it is sent (t must be within 300 s of the server's clock). Every write
carries an Idempotency-Key, yours or a fresh UUID, kept across that call's own retries, so a retry
can never create a second invoice. Retried with exponential back-off: network errors, 409 "still
being processed" (the first attempt is running), 429 (after Retry-After) and 5xx. Anything else
raises ChaingateError with the gateway's code, the HTTP status and the requestId.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Dict, List, Mapping, Optional, Union, cast

from . import __version__
from .errors import ChaingateError
from .signing import WRITE_METHODS, sign_request
from .types import CheckoutResult, Invoice, InvoiceStatus, InvoiceWithPayments, Payment, PaymentList, PaymentStatus, RefundList
from .webhooks import WEBHOOK_TOLERANCE_SECONDS, standard_webhook_secret, verify_webhook


@dataclass(frozen=True)
class Response:
    """One successful answer: the envelope's ``data`` and the exact bytes the server sent."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    data: Any
    request_id: Optional[str]
    #: True when the server replayed the stored answer of an earlier request with this Idempotency-Key.
    replayed: bool = False
    idempotency_key: Optional[str] = field(default=None)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    # A signed request is never re-sent elsewhere: a 3xx surfaces as an error.
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


def _amount(value: Union[str, int, Decimal]) -> str:
    if isinstance(value, (float, bool)):
        raise TypeError("amounts are strings (minor units, e.g. \"2500\"), never %s" % type(value).__name__)
    return str(value)


class Client:
    """``Client("https://pay.example.com", api_key, api_secret)``; keep the secret on your server."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        api_secret: str,
        *,
        max_attempts: int = 5,
        retry_base: float = 0.25,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.api_secret = api_secret
        self.max_attempts = max(1, int(max_attempts))
        self.retry_base = retry_base
        self.timeout = timeout
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect)

    # -- invoices ---------------------------------------------------------------------------

    def create_invoice(
        self,
        order_id: str,
        amount: Union[str, int, Decimal],
        currency: str,
        *,
        description: Optional[str] = None,
        customer_email: Optional[str] = None,
        customer_name: Optional[str] = None,
        customer_metadata: Optional[Mapping[str, Any]] = None,
        metadata: Optional[Mapping[str, Any]] = None,
        return_url: Optional[str] = None,
        cancel_url: Optional[str] = None,
        expires_in_minutes: Optional[int] = None,
        idempotency_key: Optional[str] = None,
    ) -> Invoice:
        """POST /api/v1/invoices. ``amount`` is in minor units of ``currency`` ("2500" is USD 25.00).

        Pass your order's own ``idempotency_key`` (store it with the order) so a retry of this
        operation, even from another process, replays the first invoice instead of making a second.
        """
        payload: Dict[str, Any] = {"orderId": order_id, "amount": _amount(amount), "currency": currency}
        optional = {
            "description": description,
            "customerEmail": customer_email,
            "customerName": customer_name,
            "customerMetadata": customer_metadata,
            "metadata": metadata,
            "returnUrl": return_url,
            "cancelUrl": cancel_url,
            "expiresInMinutes": expires_in_minutes,
        }
        payload.update({k: v for k, v in optional.items() if v is not None})
        return cast(Invoice, self.request("POST", "/api/v1/invoices", payload, idempotency_key).data)

    def get_invoice(self, invoice_id: str) -> InvoiceWithPayments:
        return cast(InvoiceWithPayments, self.request("GET", "/api/v1/invoices/%s" % _id(invoice_id)).data)

    def invoice_status(self, invoice_id: str) -> InvoiceStatus:
        return cast(InvoiceStatus, self.request("GET", "/api/v1/invoices/%s/status" % _id(invoice_id)).data)

    def cancel_invoice(self, invoice_id: str, *, idempotency_key: Optional[str] = None) -> Invoice:
        return cast(Invoice, self.request("DELETE", "/api/v1/invoices/%s" % _id(invoice_id), None, idempotency_key).data)

    def checkout(
        self,
        invoice_id: str,
        blockchain: str,
        crypto_currency: str,
        *,
        testnet: Optional[bool] = None,
        idempotency_key: Optional[str] = None,
    ) -> CheckoutResult:
        """POST /api/v1/invoices/{id}/checkout: open a payment in a chosen chain and coin."""
        payload: Dict[str, Any] = {"blockchain": blockchain, "cryptoCurrency": crypto_currency}
        if testnet is not None:
            payload["testnet"] = testnet
        return cast(CheckoutResult, self.request("POST", "/api/v1/invoices/%s/checkout" % _id(invoice_id), payload, idempotency_key).data)

    # -- payments ---------------------------------------------------------------------------

    def list_payments(
        self,
        *,
        status: Optional[str] = None,
        blockchain: Optional[str] = None,
        skip: Optional[int] = None,
        take: Optional[int] = None,
    ) -> PaymentList:
        query = {k: v for k, v in (("status", status), ("blockchain", blockchain), ("skip", skip), ("take", take)) if v is not None}
        path = "/api/v1/payments" + ("?" + urllib.parse.urlencode(query) if query else "")
        return cast(PaymentList, self.request("GET", path).data)

    def get_payment(self, payment_id: str) -> Payment:
        # The same shape as a list_payments item; refunds are payment_refunds.
        return cast(Payment, self.request("GET", "/api/v1/payments/%s" % _id(payment_id)).data)

    def payment_refunds(self, payment_id: str) -> RefundList:
        return cast(RefundList, self.request("GET", "/api/v1/payments/%s/refunds" % _id(payment_id)).data)

    def payment_status(self, payment_id: str) -> PaymentStatus:
        return cast(PaymentStatus, self.request("GET", "/api/v1/payments/%s/status" % _id(payment_id)).data)

    # -- webhooks ---------------------------------------------------------------------------

    def verify_webhook(self, headers: Any, raw_body: Union[bytes, str], tolerance: int = WEBHOOK_TOLERANCE_SECONDS) -> Dict[str, Any]:
        """verify_webhook with this client's apiSecret."""
        return verify_webhook(headers, raw_body, self.api_secret, tolerance)

    def standard_webhook_secret(self) -> str:
        return standard_webhook_secret(self.api_secret)

    # -- the signed call --------------------------------------------------------------------

    def request(self, method: str, path: str, payload: Any = None, idempotency_key: Optional[str] = None) -> Response:
        """One logical operation: serialised once, signed at each attempt, retried as documented.

        ``path`` starts with /api/v1 and may carry a query string (it is not signed).
        """
        m = method.upper()
        body = None if payload is None else json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=_json_default).encode("utf-8")
        key: Optional[str] = None
        if m in WRITE_METHODS:
            # One key for every attempt of this operation.
            key = idempotency_key or str(uuid.uuid4())
        attempt = 0
        while True:
            attempt += 1
            backoff = min(self.retry_base * (2 ** (attempt - 1)), 30.0)
            headers = sign_request(self.api_key, self.api_secret, m, path, body, key)
            headers["User-Agent"] = "chaingate-python/%s" % __version__
            try:
                status, answer_headers, raw = self._send(m, self.base_url + path, headers, body)
            except (urllib.error.URLError, http.client.HTTPException, socket.timeout, OSError) as err:
                if attempt >= self.max_attempts:
                    raise ChaingateError("network error: %s" % err, "NETWORK_ERROR", 0) from err
                self._sleep(backoff)
                continue
            envelope = _envelope(raw)
            if envelope is not None and envelope.get("success") is True:
                replayed = answer_headers.get("idempotent-replayed", "").lower() == "true"
                return Response(status, answer_headers, raw, envelope.get("data"), _str(envelope.get("requestId")), replayed, key)
            error = envelope.get("error") if envelope is not None and isinstance(envelope.get("error"), dict) else {}
            code = _str(error.get("code")) or "HTTP_%d" % status
            message = _str(error.get("message")) or raw[:200].decode("utf-8", "replace")
            in_flight = status == 409 and "still being processed" in message.lower()
            if (in_flight or status == 429 or status >= 500) and attempt < self.max_attempts:
                self._sleep(_retry_after(answer_headers.get("retry-after"), backoff))
                continue
            request_id = _str(envelope.get("requestId")) if envelope is not None else None
            details = error.get("details") if isinstance(error.get("details"), list) else None
            raise ChaingateError("%d %s: %s" % (status, code, message), code, status, request_id or answer_headers.get("x-request-id"), details)

    def _send(self, method: str, url: str, headers: Dict[str, str], body: Optional[bytes]):  # type: ignore[no-untyped-def]
        req = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with self._opener.open(req, timeout=self.timeout) as res:
                return res.status, _lower(res.headers.items()), res.read()
        except urllib.error.HTTPError as err:
            try:
                raw = err.read()
            finally:
                err.close()
            return err.code, _lower(err.headers.items() if err.headers is not None else []), raw


def _id(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


def _str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _lower(items: Any) -> Dict[str, str]:
    return {str(k).lower(): str(v) for k, v in items}


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError("%s is not JSON serialisable" % type(value).__name__)


def _envelope(raw: bytes) -> Optional[Dict[str, Any]]:
    try:
        parsed = json.loads(raw.decode("utf-8"), parse_float=Decimal)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _retry_after(value: Optional[str], backoff: float) -> float:
    try:
        seconds = float(value) if value is not None else 0.0
    except ValueError:
        seconds = 0.0
    return min(seconds, 30.0) if seconds > 0 else backoff


__all__: List[str] = ["Client", "Response"]
