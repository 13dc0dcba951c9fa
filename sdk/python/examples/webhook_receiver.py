"""A webhook endpoint with the Python client: verify, deduplicate on the event id, fulfil on
payment.completed comparing amounts. One JSON line per request on stdout.

    CHAINGATE_API_SECRET=… python3 webhook_receiver.py [port]

test/integration/sdk-python.test.ts points a real `chaingate serve` at it.
"""

import base64
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))  # the repository's copy, when not installed

from chaingate import WebhookVerificationError, format_decimal, settlement_of, verify_webhook  # noqa: E402

SECRET = os.environ["CHAINGATE_API_SECRET"]
processed = set()  # use a table with a unique event id in production


def log(**fields):
    print(json.dumps(fields, ensure_ascii=False, default=str), flush=True)


class Hooks(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, text):
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(text.encode())

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))  # the exact bytes signed
        seen = {"headers": dict(self.headers.items()), "body": base64.b64encode(raw).decode()}
        try:
            event = verify_webhook(self.headers, raw, SECRET)
        except WebhookVerificationError as err:
            log(verdict="refused", reason=err.reason, **seen)
            return self.answer(400, err.reason)
        if event["id"] in processed:
            log(verdict="duplicate", eventId=event["id"], type=event["type"], **seen)
            return self.answer(200, "duplicate")
        decision = None
        if event["type"] == "payment.completed":  # the one signal to fulfil on
            s = settlement_of(event["data"]["payment"])
            decision = {"settlement": s.status, "difference": format_decimal(s.difference)}
        processed.add(event["id"])
        log(verdict="ok", eventId=event["id"], type=event["type"], decision=decision, **seen)
        self.answer(200, "ok")


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Hooks)
log(listening="http://127.0.0.1:%d/hooks" % server.server_address[1])
server.serve_forever()
