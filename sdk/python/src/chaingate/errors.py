"""The one exception of the client: every refused or failed call."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class ChaingateError(Exception):
    """A call that did not succeed.

    ``code`` is the gateway's error code (docs/errors.md), ``HTTP_<status>`` for an answer without
    the envelope, or ``NETWORK_ERROR`` when no answer arrived (then ``status`` is 0).
    ``request_id`` is the answer's requestId: quote it to the operator.
    """

    def __init__(
        self,
        message: str,
        code: str,
        status: int,
        request_id: Optional[str] = None,
        details: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details = details

    def __repr__(self) -> str:
        return "ChaingateError(code=%r, status=%r, request_id=%r, message=%r)" % (self.code, self.status, self.request_id, self.message)
