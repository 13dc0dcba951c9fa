import unittest

from chaingate import WebhookVerificationError, canonical_string, format_decimal, settlement_of, sha256_hex, sign_request, verify_webhook

from .cases import load


class SigningCases(unittest.TestCase):
    def test_canonical_strings_and_signatures(self):
        cases = load("signing")["cases"]
        self.assertGreaterEqual(len(cases), 10)
        for case in cases:
            with self.subTest(case["name"]):
                body = case["body"].encode("utf-8")
                expect = case["expect"]
                self.assertEqual(sha256_hex(body), expect["bodySha256"])
                is_write = case["method"].upper() in ("POST", "PUT", "PATCH", "DELETE")
                key = case["idempotencyKey"] if is_write else None
                self.assertEqual(canonical_string(case["timestamp"], case["method"], case["path"], key, sha256_hex(body)), expect["canonical"])
                headers = sign_request(case["apiKey"], case["apiSecret"], case["method"], case["path"], body, case["idempotencyKey"], case["timestamp"])
                self.assertEqual(headers["X-Signature"], expect["signature"])
                self.assertEqual(headers["X-API-Key"], case["apiKey"])
                self.assertEqual(headers.get("Idempotency-Key"), expect["idempotencyKey"])
                # A str body is its UTF-8 bytes.
                self.assertEqual(sign_request(case["apiKey"], case["apiSecret"], case["method"], case["path"], case["body"], case["idempotencyKey"], case["timestamp"])["X-Signature"], expect["signature"])


class WebhookCases(unittest.TestCase):
    def test_deliveries_to_accept_and_to_refuse(self):
        cases = load("webhooks")["cases"]
        self.assertGreaterEqual(len(cases), 20)
        reasons = set()
        for case in cases:
            with self.subTest(case["name"]):
                body = case["body"].encode("utf-8")
                if case["expect"]["ok"]:
                    event = verify_webhook(case["headers"], body, case["secret"], case["tolerance"], now=case["now"])
                    self.assertEqual(event["id"], case["expect"]["eventId"])
                else:
                    with self.assertRaises(WebhookVerificationError) as refused:
                        verify_webhook(case["headers"], body, case["secret"], case["tolerance"], now=case["now"])
                    self.assertEqual(refused.exception.reason, case["expect"]["reason"])
                    reasons.add(refused.exception.reason)
        self.assertEqual(reasons, {"missing", "malformed", "expired", "mismatch"})


class SettlementCases(unittest.TestCase):
    def test_exact_underpaid_overpaid(self):
        table = load("settlement")
        for case in table["cases"]:
            with self.subTest(case["name"]):
                s = settlement_of(case["payment"])
                self.assertEqual(s.status, case["expect"]["status"])
                self.assertEqual(format_decimal(s.difference), case["expect"]["difference"])
                self.assertNotIsInstance(s.difference, float)
        for case in table["refused"]:
            with self.subTest(case["name"]):
                with self.assertRaises(ValueError):
                    settlement_of(case["payment"])


if __name__ == "__main__":
    unittest.main()
