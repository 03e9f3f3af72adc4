"""Test vectors for the AWS presets, from botocore's own retry classes.

Run with the botocore named in the output (pip install botocore==VERSION); the Rust tests in
crates/jitterlab-retry/tests/presets.rs compare the presets against the JSON this prints:

    python3 botocore_standard.py > botocore-VERSION.json

`random` is pinned to 1.0, so each delay is the envelope min(base * 2^(n-1), 20 s) that the
jitter draws below (botocore draws t = random() * envelope); the quota sequences do not
depend on it.
"""

import json
import sys

import botocore
from botocore.exceptions import ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError
from botocore.retries import quota, standard


class Response:
    """The two things botocore reads of an HTTP answer."""

    def __init__(self, status, headers=None):
        self.status_code = status
        self.headers = headers or {}


def context(attempt, status, headers=None):
    return standard.RetryContext(
        attempt_number=attempt,
        http_response=Response(status, headers),
        parsed_response={"Error": {"Code": str(status)}},
        request_context={},
    )


def detector():
    # Older releases have no throttling detector in the backoff or the quota.
    if hasattr(standard, "ThrottlingErrorDetector"):
        return standard.ThrottlingErrorDetector(standard.RetryEventAdapter())
    return None


def backoff(service):
    kwargs = {"random": lambda: 1.0}
    if "throttling_detector" in standard.ExponentialBackoff.__init__.__code__.co_varnames:
        kwargs.update(service_name=service, throttling_detector=detector())
    return standard.ExponentialBackoff(**kwargs)


def checker():
    if "throttling_detector" in standard.RetryQuotaChecker.__init__.__code__.co_varnames:
        return standard.RetryQuotaChecker(quota.RetryQuota(), detector())
    return standard.RetryQuotaChecker(quota.RetryQuota())


def envelopes(service, status):
    b = backoff(service)
    return [b.delay_amount(context(n, status)) for n in range(1, 11)]


def clamp(service, status, attempt, hint_ms):
    b = backoff(service)
    return b.delay_amount(context(attempt, status, {"x-amz-retry-after": str(hint_ms)}))


def retries_until_refused(status):
    q = checker()
    granted = 0
    while q.acquire_retry_quota(context(1, status)):
        granted += 1
    return granted


def retries_until_refused_after(exception):
    """As retries_until_refused, for an attempt that raised `exception` (no HTTP answer)."""
    q = checker()
    granted = 0
    while q.acquire_retry_quota(
        standard.RetryContext(attempt_number=1, caught_exception=exception, request_context={})
    ):
        granted += 1
    return granted


def capacity_after(steps):
    """Quota left after `steps`: ("retry", status) acquires for a failure, ("ok", None) is a
    success of the request whose last retry followed the last failure."""
    q = checker()
    request = {}
    for kind, status in steps:
        if kind == "retry":
            c = context(1, status)
            c.request_context = request
            q.acquire_retry_quota(c)
        else:
            q.release_retry_quota(request, Response(200))
            request = {}
    return q._quota.available_capacity


out = {
    "botocore": botocore.__version__,
    "max_attempts": standard.DEFAULT_MAX_ATTEMPTS,
    "service_max_attempts": getattr(standard, "_SERVICE_MAX_ATTEMPTS", {}),
    "envelope_s": {
        "transient": envelopes("s3", 503),
        "throttling": envelopes("s3", 429),
        "dynamodb_transient": envelopes("dynamodb", 503),
    },
    "retry_after_s": {
        # Attempt 1, transient: envelope 0.05 s (2026), 1 s (before).
        "hint_2000ms": clamp("s3", 503, 1, 2000),
        "hint_60000ms": clamp("s3", 503, 1, 60000),
        "hint_10ms": clamp("s3", 503, 1, 10),
    },
    "retries_until_refused": {
        "transient_503": retries_until_refused(503),
        "throttling_429": retries_until_refused(429),
        "read_timeout": retries_until_refused_after(ReadTimeoutError(endpoint_url="https://x")),
        "connect_timeout": retries_until_refused_after(
            ConnectTimeoutError(endpoint_url="https://x")
        ),
        "endpoint_connection_error": retries_until_refused_after(
            EndpointConnectionError(endpoint_url="https://x")
        ),
    },
    "capacity_after": {
        "429_503_ok": capacity_after([("retry", 429), ("retry", 503), ("ok", None)]),
        "503_429_ok": capacity_after([("retry", 503), ("retry", 429), ("ok", None)]),
        "ok": capacity_after([("retry", 503), ("ok", None), ("ok", None)]),
    },
}
json.dump(out, sys.stdout, indent=2, sort_keys=True)
print()
