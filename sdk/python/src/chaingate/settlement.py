"""settlement_of: compare what a payment received with what it asked for, exactly.

chaingate records the difference and never resolves it (docs/api.md, rule 10): fulfil on
payment.completed, and decide yourself what an under- or overpayment means for the order.
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

_DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")
# Amounts are up to 80 characters: far beyond the default context's 28 significant digits.
_CONTEXT = decimal.Context(prec=200, traps=[decimal.Inexact, decimal.InvalidOperation])


@dataclass(frozen=True)
class Settlement:
    """``status`` is "exact", "underpaid" or "overpaid"; ``difference`` is received − expected."""

    status: str
    expected: Decimal
    received: Decimal
    difference: Decimal

    @property
    def is_exact(self) -> bool:
        return self.status == "exact"


def _amount(payment: Mapping[str, Any], *names: str) -> Decimal:
    for name in names:
        value = payment.get(name)
        if value is None:
            continue
        if not isinstance(value, str) or not _DECIMAL.match(value):
            raise ValueError("payment %s must be a non-negative decimal string, got %r" % (name, value))
        return Decimal(value)
    raise ValueError("payment has no %s" % " or ".join(names))


def format_decimal(value: Decimal) -> str:
    """A Decimal as a plain decimal string: no exponent, no trailing zeros, "0" for zero."""
    if value == 0:
        return "0"
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def settlement_of(payment: Mapping[str, Any]) -> Settlement:
    """Classify a payment (a gateway Payment, or ``event["data"]["payment"]`` of a webhook).

    The expected amount is ``expectedAmount`` (``expected_amount``, else ``amount``); the received
    one ``receivedAmount`` (``received_amount``). Raises ValueError for anything but decimal strings.
    """
    expected = _amount(payment, "expectedAmount", "expected_amount", "amount")
    received = _amount(payment, "receivedAmount", "received_amount")
    difference = _CONTEXT.subtract(received, expected)
    status = "exact" if difference == 0 else ("underpaid" if difference < 0 else "overpaid")
    return Settlement(status=status, expected=expected, received=received, difference=difference)
