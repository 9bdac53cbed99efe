import sys, json
from datetime import datetime, timezone
from zoneinfo import ZoneInfo
from icalendar import Calendar
from dateutil.rrule import rrulestr, rruleset

def aware(prop):
    # icalendar may hand back pytz zones; dateutil needs zoneinfo to move across DST.
    dt = prop.dt
    tzid = prop.params.get('TZID')
    if tzid:
        return dt.replace(tzinfo=ZoneInfo(tzid))
    return dt

cal = Calendar.from_ical(sys.stdin.read())
lo = datetime.fromisoformat(sys.argv[1]); hi = datetime.fromisoformat(sys.argv[2])
out = {}
for ev in cal.walk('VEVENT'):
    start = aware(ev['DTSTART'])
    rs = rruleset()
    rs.rrule(rrulestr(ev['RRULE'].to_ical().decode(), dtstart=start))
    ex = ev.get('EXDATE')
    if ex is not None:
        for line in (ex if isinstance(ex, list) else [ex]):
            tzid = line.params.get('TZID')
            for d in line.dts:
                rs.exdate(d.dt.replace(tzinfo=ZoneInfo(tzid)) if tzid else d.dt)
    out[str(ev['UID'])] = [d.astimezone(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ') for d in rs.between(lo, hi, inc=True) if d < hi]
print(json.dumps(out))
