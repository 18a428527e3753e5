# Helpers shared by the tests that read every value runlab writes (imported by the Python
# blocks of tests/cli/test_*_values.sh and friends): a list of failed expectations, and
# the ISO 8601 UTC stamps runlab writes parsed here, independently of runlab's code.
import datetime
import re
import sys


class Expectations:
    def __init__(self, label):
        self.label, self.bad = label, []

    def __call__(self, what, ok, got=None):
        if not ok:
            self.bad.append("%s (got %r)" % (what, got))

    def finish(self, most=30):
        for line in self.bad[:most]:
            print("  %s: %s" % (self.label, line))
        sys.exit(1 if self.bad else 0)


def iso_ns(iso):
    """'YYYY-mm-ddTHH:MM:SS.fffffffffZ' -> ns since the epoch; None for anything else."""
    mt = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{9})Z", iso or "")
    if not mt:
        return None
    y, mo, da, h, mi, s, frac = (int(x) for x in mt.groups())
    sec = datetime.datetime(y, mo, da, h, mi, s, tzinfo=datetime.timezone.utc).timestamp()
    return int(sec) * 1000000000 + frac
