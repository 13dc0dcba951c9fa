"""chaingate: a client of the chaingate payment gateway, standard library only (Python >= 3.9).

    from chaingate import Client, verify_webhook, settlement_of

See docs/sdk-python.md in the chaingate repository.
"""

__version__ = "0.1.0"

from .client import Client, Response  # noqa: E402
from .errors import ChaingateError  # noqa: E402
from .settlement import Settlement, format_decimal, settlement_of  # noqa: E402
from .signing import canonical_string, hmac_hex, sha256_hex, sign_request  # noqa: E402
from .webhooks import (  # noqa: E402
    WEBHOOK_TOLERANCE_SECONDS,
    WebhookVerificationError,
    standard_webhook_secret,
    verify_webhook,
    webhook_signature_hex,
)

__all__ = [
    "__version__",
    "Client",
    "Response",
    "ChaingateError",
    "Settlement",
    "settlement_of",
    "format_decimal",
    "canonical_string",
    "hmac_hex",
    "sha256_hex",
    "sign_request",
    "WEBHOOK_TOLERANCE_SECONDS",
    "WebhookVerificationError",
    "standard_webhook_secret",
    "verify_webhook",
    "webhook_signature_hex",
]
