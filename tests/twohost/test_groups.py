"""Many ranks on two simulated hosts (issue 25): halo2d on GROUPS_RANKS ranks (default 256, the
most this 2-core machine runs), oversubscribed, under liblog, half the ranks on nodeA and half on
nodeB (tests/twohost.py). The merged log stores no copy of MPI_COMM_WORLD's members; upshot,
grouping by node, shows two node groups, and its communication matrix has the messages inside each
node on the diagonal and those between the nodes off it, exactly as the log's messages say, with
the totals `mpe stat` gives."""
import collections
import csv
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402
import twohost  # noqa: E402

NP = int(os.environ.get("GROUPS_RANKS", "256"))
ITERS = 2
UPSHOT = os.path.join(mpitest.BUILD, "bin", "upshot")

twohost.skip_unless_available()
if not os.path.exists(UPSHOT):
    mpitest.skip("no upshot in this build (MPE_BUILD_VIEWER=OFF)")

r = twohost.run(NP, [mpitest.program("halo2d"), str(ITERS)], tools=("log",), timeout=900,
                env={"MPE_LOGFILE_PREFIX": "halo2d"})
mpitest.expect("ranks=%d" % NP in r.stdout, "halo2d did not finish on %d ranks:\n%s" % (NP, r.stdout[-2000:]))
log = os.path.join(r.workdir, "halo2d.mpelog")
mpitest.expect(os.path.exists(log), "no merged log in %s: %r" % (r.workdir, os.listdir(r.workdir)))

# One copy of MPI_COMM_WORLD's members: none stored (implied), not one per rank.
defs = mpitest.mpe("print", "--definitions", log).stdout
stored = int(re.search(r"groups stored: [0-9]+ with ([0-9]+) members", defs).group(1))
mpitest.expect_eq(stored, 0, "members stored in the definitions (%s)" % defs.strip())

# What the matrix must show, from the log's own messages: per (host of sender, host of receiver).
st = json.loads(mpitest.mpe("stat", "--json", log).stdout)
host = lambda rank: twohost.HOSTS[0] if rank < NP // 2 else twohost.HOSTS[1]  # noqa: E731
want = collections.Counter()
pattern = re.compile(r" r([0-9]+)\.t[0-9]+ msg -> r([0-9]+)\.t[0-9]+ .* bytes=([0-9]+)")
for line in mpitest.mpe("print", "--kind", "msg", log).stdout.splitlines():
    m = pattern.search(line)
    if m:
        want[(host(int(m.group(1))), host(int(m.group(2))), "messages")] += 1
        want[(host(int(m.group(1))), host(int(m.group(2))), "bytes")] += int(m.group(3))
mpitest.expect_eq(sum(v for k, v in want.items() if k[2] == "messages"), st["messages"]["matched"],
                  "messages printed and matched")
mpitest.expect(want[(twohost.HOSTS[0], twohost.HOSTS[1], "messages")] > 0, "no message between the nodes: %r" % want)

env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
for value in ("messages", "bytes"):
    image, table = os.path.join(r.workdir, "groups.png"), os.path.join(r.workdir, "matrix-%s.csv" % value)
    p = subprocess.run([UPSHOT, "--export", image, "--range", "all", "--group", "node", "--matrix", table,
                        "--matrix-value", value, log], capture_output=True, text=True, timeout=300, env=env)
    mpitest.expect(p.returncode == 0, "upshot --group node exited %d: %s" % (p.returncode, p.stderr[-2000:]))
    cells = {(row["from"], row["to"]): int(float(row[value])) for row in csv.DictReader(open(table))}
    labels = sorted({a for a, _ in cells} | {b for _, b in cells})
    mpitest.expect_eq(len(labels), 2, "node groups in the matrix (%r)" % labels)
    for a in labels:
        for b in labels:
            ha = next(h for h in twohost.HOSTS if h in a)
            hb = next(h for h in twohost.HOSTS if h in b)
            mpitest.expect_eq(cells.get((a, b), 0), want[(ha, hb, value)], "%s from %s to %s" % (value, a, b))
    total = sum(cells.values())
    mpitest.expect_eq(total, st["messages"]["matched" if value == "messages" else "bytes"], value + " in all")
print("%d ranks on two hosts: two node groups; %d messages inside nodeA, %d inside nodeB on the diagonal, %d and "
      "%d between them" % (NP, want[(twohost.HOSTS[0], twohost.HOSTS[0], "messages")],
                           want[(twohost.HOSTS[1], twohost.HOSTS[1], "messages")],
                           want[(twohost.HOSTS[0], twohost.HOSTS[1], "messages")],
                           want[(twohost.HOSTS[1], twohost.HOSTS[0], "messages")]))
mpitest.cleanup(r)
print("ok")
