"""A walk through every gateway route with the Python client, one JSON line per step.

    CHAINGATE_URL=http://127.0.0.1:8080 CHAINGATE_API_KEY=… CHAINGATE_API_SECRET=… python3 walkthrough.py

test/integration/sdk-python.test.ts runs it against a real `chaingate serve` and checks each line.
"""

import hashlib
import json
import os
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))  # the repository's copy, when not installed

from chaingate import ChaingateError, Client, format_decimal, settlement_of  # noqa: E402

URL = os.environ["CHAINGATE_URL"]
client = Client(URL, os.environ["CHAINGATE_API_KEY"], os.environ["CHAINGATE_API_SECRET"])
run = uuid.uuid4().hex[:8]


def step(name, **fields):
    print(json.dumps({"step": name, **fields}, ensure_ascii=False, default=str), flush=True)


def failure(err):
    return {"code": err.code, "status": err.status, "requestId": err.request_id}


# 1. An invoice, with the order's own Idempotency-Key: a retry of the same operation replays it.
order_key = "order-%s-1" % run
invoice = client.create_invoice("order-%s-1" % run, "2500", "USD", description="Zwei Becher ☕", metadata={"cart": "c-77"}, idempotency_key=order_key)
step("created", id=invoice["id"], status=invoice["status"], amount=invoice["amount"], description=invoice["description"], metadata=invoice["metadata"])
again = client.create_invoice("order-%s-1" % run, "2500", "USD", description="Zwei Becher ☕", metadata={"cart": "c-77"}, idempotency_key=order_key)
step("retried", id=again["id"])

# 2. The same key replays the stored answer byte for byte (client.request gives the raw answer).
payload = {"orderId": "order-%s-2" % run, "amount": "990", "currency": "EUR"}
first = client.request("POST", "/api/v1/invoices", payload, idempotency_key="order-%s-2" % run)
second = client.request("POST", "/api/v1/invoices", payload, idempotency_key="order-%s-2" % run)
step("replayed", id=first.data["id"], sameBytes=first.body == second.body, firstReplayed=first.replayed, secondReplayed=second.replayed, status=second.status, bodySha256=hashlib.sha256(second.body).hexdigest())

# 3. Reads before and after a gateway checkout.
step("invoiceStatus", **client.invoice_status(invoice["id"]))
checkout = client.checkout(invoice["id"], "ethereum", "ETH", idempotency_key="checkout-%s-1" % run)
payment = checkout["payment"]
step("checkout", paymentId=payment["id"], address=payment["paymentAddress"], amount=payment["amount"], invoiceStatus=checkout["invoice"]["status"])
step("invoice", status=client.get_invoice(invoice["id"])["status"], payments=len(client.get_invoice(invoice["id"])["payments"]))
listed = client.list_payments(status="PENDING", take=5)
step("listed", total=listed["pagination"]["total"], ids=[p["id"] for p in listed["items"]])
full = client.get_payment(payment["id"])
settlement = settlement_of(full)
step("payment", id=full["id"], status=full["status"], amount=full["amount"], receivedAmount=full["receivedAmount"], settlement=settlement.status, difference=format_decimal(settlement.difference))
step("paymentStatus", **client.payment_status(payment["id"]))
step("refunds", keys=sorted(full.keys()), refunds=len(client.payment_refunds(payment["id"])["items"]))

# 4. Cancel the second invoice (the webhook receiver hears invoice.cancelled).
cancelled = client.cancel_invoice(first.data["id"], idempotency_key="cancel-%s-2" % run)
step("cancelled", id=cancelled["id"], status=cancelled["status"])

# 5. Errors carry the gateway's code, the HTTP status and the request id.
try:
    Client(URL, os.environ["CHAINGATE_API_KEY"], "not-the-secret").get_invoice(invoice["id"])
except ChaingateError as err:
    step("wrongSecret", **failure(err))
try:
    client.get_invoice("doesnotexist0000000000000")
except ChaingateError as err:
    step("notFound", **failure(err))
try:
    client.create_invoice("another-order", "100", "USD", idempotency_key=order_key)
except ChaingateError as err:
    step("keyReused", **failure(err))
try:
    client.cancel_invoice(first.data["id"])
except ChaingateError as err:
    step("cancelAgain", **failure(err))
