"""Test vectors for the aws-adaptive preset's rate limiter, from botocore's own classes.

Run with the botocore named in the output (pip install botocore==VERSION); the Rust test in
crates/jitterlab-retry/tests/adaptive_rate.rs replays the same steps on the engine's
AdaptiveRateLimiter and compares within a tolerance:

    python3 botocore_adaptive.py > botocore-adaptive-VERSION.json

botocore's ClientRateLimiter (retries/adaptive.py) is built as register_retry_handler builds
it, around a clock that only this script moves. One client sends one request at a time: it
wants to send every 50 ms, takes a token first (botocore blocks on a condition variable; here
the script moves the clock by the sleep the bucket asks for, as that wait would), and gets its
answer 20 ms after sending. Answers in the throttling windows are 429s (botocore's
ThrottlingErrorDetector decides, from the status), all others 200s.
"""

import json
import sys

import botocore
from botocore.exceptions import CapacityNotAvailableError
from botocore.retries import adaptive, bucket, standard, throttling

INTERVAL = 0.05
LATENCY = 0.02
END = 12.0
THROTTLED = [(2.0, 3.0), (6.0, 6.5)]


class Clock(bucket.Clock):
    def __init__(self):
        self.t = 0.0

    def sleep(self, amount):
        self.t += amount

    def current_time(self):
        return self.t


class Response:
    def __init__(self, status):
        self.status_code = status
        self.headers = {}


def limiter(clock):
    # As adaptive.register_retry_handler, with this clock.
    return adaptive.ClientRateLimiter(
        rate_adjustor=throttling.CubicCalculator(
            starting_max_rate=0, start_time=clock.current_time()
        ),
        rate_clocker=adaptive.RateClocker(clock),
        token_bucket=bucket.TokenBucket(max_rate=1, clock=clock),
        throttling_detector=standard.ThrottlingErrorDetector(
            retry_event_adapter=standard.RetryEventAdapter()
        ),
        clock=clock,
    )


def acquire(lim, clock):
    """on_sending_request's blocking acquire; the seconds it waited (TokenBucket._acquire's
    loop, the condition variable's timed wait being a move of the clock)."""
    if not lim._enabled:
        return 0.0
    waited = 0.0
    for _ in range(100):
        try:
            lim._token_bucket.acquire(block=False)
            return waited
        except CapacityNotAvailableError:
            # A real clock always moves on: a float's last digit short of a token (a sleep
            # of 1e-16 s that a clock at 2.5 s cannot add) waits a nanosecond.
            amount = max(lim._token_bucket._sleep_amount(1), 1e-9)
            clock.sleep(amount)
            waited += amount
    raise RuntimeError("the bucket never filled")


def answer(lim, status, attempt):
    lim.on_receiving_response(
        response=(Response(status), {"Error": {"Code": str(status)}} if status >= 400 else {}),
        attempts=attempt,
        operation=None,
        caught_exception=None,
        request_dict={"context": {}},
    )


def run():
    clock = Clock()
    lim = limiter(clock)
    steps = []
    want = 0.0
    while want < END:
        clock.t = max(clock.t, want)
        at = clock.t
        delay = acquire(lim, clock)
        clock.sleep(LATENCY)
        done = clock.t
        throttled = any(a <= done < b for a, b in THROTTLED)
        answer(lim, 429 if throttled else 200, 1)
        tb = lim._token_bucket
        steps.append(
            {
                "want_s": at,
                "delay_s": delay,
                "answer_s": done,
                "throttled": throttled,
                "enabled": lim._enabled,
                "fill_rate": tb.max_rate,
                "max_capacity": tb.max_capacity,
                "capacity": tb.available_capacity,
                "measured_rate": lim._rate_clocker.measured_rate,
                "w_max": lim._rate_adjustor.get_params_snapshot().w_max,
                "k": lim._rate_adjustor.get_params_snapshot().k,
            }
        )
        want += INTERVAL
    return steps


out = {
    "botocore": botocore.__version__,
    "constants": {
        "beta": throttling.CubicCalculator._BETA,
        "scale_constant": throttling.CubicCalculator._SCALE_CONSTANT,
        "smoothing": adaptive.RateClocker._DEFAULT_SMOOTHING,
        "time_bucket_range_s": adaptive.RateClocker._TIME_BUCKET_RANGE,
        "min_fill_rate": bucket.TokenBucket._MIN_RATE,
        "max_rate_adjust_scale": adaptive.ClientRateLimiter._MAX_RATE_ADJUST_SCALE,
    },
    "interval_s": INTERVAL,
    "latency_s": LATENCY,
    "steps": run(),
}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()
