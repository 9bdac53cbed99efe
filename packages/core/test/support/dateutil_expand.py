"""Reference expansion with python-dateutil, for the comparison test.

Reads JSON from stdin: [{"rule": "FREQ=...", "start": "2026-01-05T09:00:00", "tz": "Europe/Berlin",
"limit": 40, "cutoff": "2200-01-01T00:00:00Z"}, ...] and writes, for each case, either
{"instants": ["2026-01-05T08:00:00Z", ...]} or {"error": "..."}, or {"timeout": true} when dateutil takes over five seconds.

DTSTART is a zoneinfo-aware datetime with fold=0, and dateutil combines each wall-clock reading
with that tzinfo (fold=0). PEP 495 gives fold=0 exactly RFC 5545's reading: a time in a gap uses
the offset from before the gap (so it moves forward by the gap), an ambiguous time is its first
occurrence. Converting each result with astimezone(UTC) therefore needs no extra normalisation.
"""
import json
import signal
import sys
from datetime import datetime, timezone
from itertools import islice
from zoneinfo import ZoneInfo

from dateutil.rrule import rrulestr


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def expand(case):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(5)
    try:
        return _expand(case)
    except Timeout:
        return {"timeout": True}
    finally:
        signal.alarm(0)


def _expand(case):
    tz = ZoneInfo(case["tz"])
    start = datetime.fromisoformat(case["start"]).replace(tzinfo=tz)
    cutoff = datetime.fromisoformat(case["cutoff"].replace("Z", "+00:00"))
    try:
        rule = rrulestr(case["rule"], dtstart=start)
        out = []
        for dt in islice(rule, case["limit"]):
            if dt >= cutoff:
                break
            out.append(dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        return {"instants": out}
    except Exception as e:  # noqa: BLE001 - any failure is reported to the caller
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    cases = json.load(sys.stdin)
    json.dump([expand(c) for c in cases], sys.stdout)


if __name__ == "__main__":
    main()
