import ast
import json
import os
import socket
import threading
import unittest
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import chaingate
from chaingate import ChaingateError, Client, canonical_string, hmac_hex, sha256_hex


class Stub:
    """A real HTTP server on 127.0.0.1 answering from a script of (status, body, headers)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.seen = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                stub.seen.append({"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
                status, payload, extra = stub.answers.pop(0) if stub.answers else (500, {"success": False}, {})
                raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


IN_FLIGHT = (409, {"success": False, "error": {"code": "IDEMPOTENCY_KEY_CONFLICT", "message": "A request with this Idempotency-Key is still being processed; back off and retry"}, "requestId": "req_a"}, {})
CREATED = (201, {"success": True, "data": {"id": "inv1", "status": "OPEN", "amount": "2500"}, "requestId": "req_b"}, {})


class ClientBehaviour(unittest.TestCase):
    def setUp(self):
        self.sleeps = []

    def client(self, url, **kw):
        return Client(url, "key", "secret", sleep=self.sleeps.append, **kw)

    def test_a_write_is_retried_with_one_key_while_the_first_attempt_runs(self):
        stub = Stub([IN_FLIGHT, IN_FLIGHT, CREATED])
        self.addCleanup(stub.close)
        invoice = self.client(stub.url).create_invoice("o-1", "2500", "USD", idempotency_key="order-7")
        self.assertEqual(invoice["id"], "inv1")
        self.assertEqual([s["headers"]["idempotency-key"] for s in stub.seen], ["order-7"] * 3)
        self.assertEqual(self.sleeps, [0.25, 0.5])
        for s in stub.seen:
            # Each attempt is signed over the exact bytes it carried.
            t, v1 = s["headers"]["x-signature"][2:].split(",v1=")
            self.assertEqual(hmac_hex("secret", canonical_string(t, "POST", "/api/v1/invoices", "order-7", sha256_hex(s["body"]))), v1)
            self.assertEqual(s["headers"]["content-type"], "application/json")
        self.assertEqual(json.loads(stub.seen[0]["body"]), {"orderId": "o-1", "amount": "2500", "currency": "USD"})

    def test_a_fresh_key_is_made_once_per_operation(self):
        stub = Stub([IN_FLIGHT, CREATED, CREATED])
        self.addCleanup(stub.close)
        c = self.client(stub.url)
        c.create_invoice("o-1", 2500, "USD")
        c.create_invoice("o-2", Decimal("990"), "USD")
        keys = [s["headers"]["idempotency-key"] for s in stub.seen]
        self.assertEqual(keys[0], keys[1])
        self.assertNotEqual(keys[1], keys[2])
        self.assertEqual(json.loads(stub.seen[2]["body"])["amount"], "990")

    def test_other_errors_are_not_retried_and_carry_code_status_and_request_id(self):
        stub = Stub([(400, {"success": False, "error": {"code": "VALIDATION_ERROR", "message": "Invalid request body", "details": [{"path": "body.amount", "message": "bad"}]}, "requestId": "req_z"}, {})])
        self.addCleanup(stub.close)
        with self.assertRaises(ChaingateError) as caught:
            self.client(stub.url).create_invoice("o", "x", "USD")
        err = caught.exception
        self.assertEqual((err.code, err.status, err.request_id, err.details[0]["path"]), ("VALIDATION_ERROR", 400, "req_z", "body.amount"))
        self.assertEqual(len(stub.seen), 1)

    def test_5xx_and_429_are_retried_then_reported(self):
        stub = Stub([(503, {"success": False, "error": {"code": "NO_AVAILABLE_WALLET", "message": "later"}, "requestId": "req_1"}, {}), (429, {"success": False, "error": {"code": "RATE_LIMITED", "message": "slow"}}, {"Retry-After": "2"}), (500, b"oops", {})])
        self.addCleanup(stub.close)
        with self.assertRaises(ChaingateError) as caught:
            self.client(stub.url, max_attempts=3).payment_status("p1")
        self.assertEqual((caught.exception.code, caught.exception.status), ("HTTP_500", 500))
        self.assertEqual(self.sleeps, [0.25, 2.0])
        get = stub.seen[0]
        self.assertNotIn("idempotency-key", get["headers"])
        self.assertNotIn("content-type", get["headers"])
        self.assertEqual(get["path"], "/api/v1/payments/p1/status")

    def test_network_errors_are_retried_then_raised_as_network_error(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(ChaingateError) as caught:
            self.client("http://127.0.0.1:%d" % port, max_attempts=3).get_invoice("x")
        self.assertEqual((caught.exception.code, caught.exception.status, caught.exception.request_id), ("NETWORK_ERROR", 0, None))
        self.assertEqual(len(self.sleeps), 2)

    def test_a_redirect_is_not_followed(self):
        stub = Stub([(302, {"success": False}, {"Location": "http://127.0.0.1:1/elsewhere"})])
        self.addCleanup(stub.close)
        with self.assertRaises(ChaingateError) as caught:
            self.client(stub.url).list_payments(status="PENDING", take=5)
        self.assertEqual(caught.exception.status, 302)
        self.assertEqual(stub.seen[0]["path"], "/api/v1/payments?status=PENDING&take=5")

    def test_floats_are_refused_as_amounts(self):
        with self.assertRaises(TypeError):
            Client("http://127.0.0.1:1", "k", "s").create_invoice("o", 25.0, "USD")

    def test_path_ids_are_percent_encoded(self):
        stub = Stub([(404, {"success": False, "error": {"code": "INVOICE_NOT_FOUND", "message": "Invoice not found"}, "requestId": "req_n"}, {})])
        self.addCleanup(stub.close)
        with self.assertRaises(ChaingateError):
            self.client(stub.url).get_invoice("a/b?c")
        self.assertEqual(stub.seen[0]["path"], "/api/v1/invoices/a%2Fb%3Fc")


class Compatibility(unittest.TestCase):
    def test_the_package_parses_as_python_3_9(self):
        package = os.path.dirname(chaingate.__file__)
        modules = [f for f in os.listdir(package) if f.endswith(".py")]
        self.assertGreaterEqual(len(modules), 6)
        for name in modules:
            with open(os.path.join(package, name), encoding="utf-8") as f:
                ast.parse(f.read(), name, feature_version=(3, 9))

    def test_only_the_standard_library_is_imported(self):
        import sys

        package = os.path.dirname(chaingate.__file__)
        for name in os.listdir(package):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(package, name), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                roots = [a.name.split(".")[0] for a in node.names] if isinstance(node, ast.Import) else ([node.module.split(".")[0]] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
                for root in roots:
                    self.assertIn(root, sys.stdlib_module_names | {"__future__"}, "%s imports %s" % (name, root))


if __name__ == "__main__":
    unittest.main()
