"""The shapes of the gateway's answers (docs/api.md#objects), exactly as on the wire.

Results are plain dicts typed with these TypedDicts: camelCase keys as documented, amounts as
strings (decimal strings; an invoice's amount is in fiat minor units). Fields the server adds
later simply appear in the dict.
"""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

InvoiceStatusName = Literal["DRAFT", "OPEN", "PAYMENT_PENDING", "PAID", "EXPIRED", "CANCELLED"]
PaymentStatusName = Literal["PENDING", "PROCESSING", "CONFIRMING", "COMPLETED", "FAILED", "EXPIRED", "REFUNDED"]


class Invoice(TypedDict):
    id: str
    referenceId: str
    orderId: str
    description: Optional[str]
    amount: str
    currency: str
    status: InvoiceStatusName
    customerEmail: Optional[str]
    customerName: Optional[str]
    customerMetadata: Dict[str, Any]
    metadata: Dict[str, Any]
    returnUrl: Optional[str]
    cancelUrl: Optional[str]
    expiresAt: str
    viewedAt: Optional[str]
    paidAt: Optional[str]
    cancelledAt: Optional[str]
    createdAt: str


class PaymentInInvoice(TypedDict):
    id: str
    referenceId: str
    status: PaymentStatusName
    blockchain: str
    currency: str
    amount: str
    receivedAmount: str
    address: str
    createdAt: str


class InvoiceWithPayments(Invoice):
    payments: List[PaymentInInvoice]


class InvoiceStatus(TypedDict):
    id: str
    referenceId: str
    status: InvoiceStatusName
    paymentId: Optional[str]
    paidAt: Optional[str]
    expiresAt: str


class CheckoutInvoice(TypedDict):
    id: str
    referenceId: str
    status: InvoiceStatusName
    amount: str
    currency: str
    expiresAt: str


class CheckoutPayment(TypedDict):
    id: str
    referenceId: str
    paymentAddress: str
    amount: str
    blockchain: str
    cryptoCurrency: str
    status: PaymentStatusName
    expiresAt: str
    createdAt: str
    network: str
    isTestnet: bool
    decimals: int
    requiredConfirmations: int


class CheckoutResult(TypedDict):
    invoice: CheckoutInvoice
    payment: CheckoutPayment


class InvoiceStub(TypedDict):
    id: str
    referenceId: str
    orderId: str
    status: InvoiceStatusName


class Payment(TypedDict):
    id: str
    referenceId: str
    status: PaymentStatusName
    blockchain: str
    network: str
    isTestnet: bool
    cryptoCurrency: str
    amount: str
    expectedAmount: str
    receivedAmount: str
    address: str
    confirmations: int
    requiredConfirmations: int
    transactionHash: Optional[str]
    expiresAt: str
    createdAt: str
    completedAt: Optional[str]
    paymentType: str
    method: str
    metadata: Dict[str, Any]
    invoice: InvoiceStub


class Refund(TypedDict):
    # Also "from" ("deposit" or "wallet"), which a Python class cannot name: refund["from"].
    id: str
    status: Literal["PLANNED", "PENDING", "CONFIRMED", "FAILED"]
    amount: str
    cryptoCurrency: str
    address: str
    fromAddress: str
    transactionHash: Optional[str]
    fee: str
    feeCurrency: str
    createdAt: str
    confirmedAt: Optional[str]


class RefundList(TypedDict):
    # GET /api/v1/payments/{id}/refunds: chaingate's addition, oldest first.
    items: List[Refund]


class Pagination(TypedDict):
    total: int
    page: int
    limit: int
    hasMore: bool


class PaymentList(TypedDict):
    items: List[Payment]
    pagination: Pagination


class PaymentStatus(TypedDict):
    id: str
    referenceId: str
    status: PaymentStatusName
    confirmations: int
    requiredConfirmations: int
    expiresAt: str
    completedAt: Optional[str]


class WebhookEvent(TypedDict):
    id: str
    type: str
    apiVersion: str
    createdAt: str
    data: Dict[str, Any]
