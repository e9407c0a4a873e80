"""What `mpe cut`'s tests share: cutting, reading the cut with every command, and the original's
`mpe print` lines restricted to what a cut keeps (the expected print of the cut)."""
import difflib
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import mpitest  # noqa: E402

LINE = re.compile(r"^(-?\d+) r(\d+)\.t(\d+) (\S+)")
MSG = re.compile(r" msg -> r(\d+)\.t\d+ recv=(-?\d+) ")


def cut(log, out, *args):
    """Runs `mpe cut log -o out args`; returns its one line."""
    p = mpitest.mpe("cut", log, "-o", out, *args)
    lines = p.stdout.splitlines()
    mpitest.expect(len(lines) == 1 and lines[0].startswith("mpe cut: wrote " + out + " ("),
                   "mpe cut %s: one line naming the output, got %r" % (" ".join(args), p.stdout))
    mpitest.expect(p.stderr == "", "mpe cut %s: nothing on stderr, got %r" % (" ".join(args), p.stderr))
    return lines[0]


def print_lines(log, *args):
    return mpitest.mpe("print", log, *args).stdout.splitlines()


def stat_json(log):
    return json.loads(mpitest.mpe("stat", "--json", log).stdout)


def reads_everywhere(log, workdir):
    """Every command that reads a log reads the cut without an error."""
    for argv in (("stat", log), ("stat", "--json", log), ("print", log), ("waits", log), ("waits", "--json", log),
                 ("umq", log), ("print", "--definitions", log),
                 ("convert", log, "--to", "chrome", os.path.join(workdir, "cut.json"))):
        mpitest.mpe(*argv)
    otf2 = os.path.join(workdir, "cut-otf2")
    shutil.rmtree(otf2, ignore_errors=True)
    mpitest.mpe("convert", log, "--to", "otf2", otf2)
    mpitest.mpe("stat", os.path.join(otf2, "traces.otf2"))
    shutil.rmtree(otf2, ignore_errors=True)


def parse(line):
    """(time, rank, kind, destination rank, receive time) of a print line (the last two for messages)."""
    m = LINE.match(line)
    mpitest.expect(m is not None, "a print line: %r" % line)
    t, rank, kind = int(m.group(1)), int(m.group(2)), m.group(4)
    if kind == "msg":
        g = MSG.search(line)
        return t, rank, kind, int(g.group(1)), int(g.group(2))
    return t, rank, kind, None, None


def expected(lines, point, rank_kept):
    """The lines a cut keeps: states and events where point(rank, time); a message where point()
    keeps both its ends; communicator and window creations of every kept rank (rank_kept(rank)),
    whatever their time. One-sided transfers are not expected in these logs."""
    out = []
    for line in lines:
        t, rank, kind, dst, recv = parse(line)
        mpitest.expect(kind != "rma", "no one-sided transfers in the logs cut here: %r" % line)
        if kind == "msg":
            keep = point(rank, t) and point(dst, recv)
        elif kind in ("comm", "win"):
            keep = rank_kept(rank)
        else:
            keep = point(rank, t)
        if keep:
            out.append(line)
    return out


def timeless(lines):
    """The lines without their times (the leading time and a message's receive time), sorted."""
    return sorted(re.sub(r" recv=-?\d+ ", " ", line.split(" ", 1)[1]) for line in lines)


def check_lines(actual, wanted, what, exact_times=True):
    """The cut's print against the expected lines; without exact_times, for logs whose clocks
    contradict each other (messages still backward after the reader's causality repair): the cut's
    reader repairs its fewer messages again, so only the times may differ."""
    if actual == wanted or (not exact_times and timeless(actual) == timeless(wanted)):
        return True
    if not exact_times:
        actual, wanted = timeless(actual), timeless(wanted)
    diff = list(difflib.unified_diff(wanted, actual, "expected", "cut", lineterm="", n=1))
    return mpitest.check(False, "%s: the cut's print differs from the original's restricted (%d lines against %d):\n%s"
                         % (what, len(actual), len(wanted), "\n".join(diff[:40])))


def fails(log, out, args, words):
    """`mpe cut` with bad options: exit 1, one error line containing `words`, no output file."""
    p = mpitest.mpe("cut", log, "-o", out, *args, check=False)
    err = p.stderr.strip().splitlines()
    mpitest.check(p.returncode != 0, "mpe cut %s fails" % " ".join(args))
    mpitest.check(len(err) == 1 and words in err[0], "mpe cut %s: one line with %r, got %r" % (" ".join(args), words, p.stderr))
    mpitest.check(not os.path.exists(out), "mpe cut %s leaves no %s" % (" ".join(args), out))
    where = os.path.dirname(out) or "."
    leftovers = [f for f in os.listdir(where) if ".cut-" in f] if os.path.isdir(where) else []
    mpitest.check(not leftovers, "mpe cut %s leaves no temporary file: %r" % (" ".join(args), leftovers))
