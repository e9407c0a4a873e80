"""The log format at many ranks (issue 25): `mpe synth` logs of 16,384, 100,000 and 1,048,576 ranks
(a few records per rank; 16,384 with two iterations of messages and collectives) open in every
reader, their definitions grow linearly (the same bytes per rank at every size, within 5 %), and a
command that cannot write its output says so and leaves no file. FORMAT_SCALE_RANKS limits the
sizes (e.g. "16384" for a quick run)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
UPSHOT = os.path.join(mpitest.BUILD, "bin", "upshot")
SIZES = [int(x) for x in os.environ.get("FORMAT_SCALE_RANKS", "16384,100000,1048576").split(",")]


def mpe(*args, timeout=600):
    p = subprocess.run([MPE] + list(args), capture_output=True, text=True, timeout=timeout)
    mpitest.expect(p.returncode == 0, "mpe %s exited %d:\n%s" % (" ".join(args), p.returncode, p.stderr[-2000:]))
    return p.stdout


def definitions(log):
    """(decoded bytes per rank, members stored) from `mpe print --definitions`."""
    out = mpe("print", "--definitions", log)
    per_rank = float(re.search(r"decoded \(([0-9.]+) per rank\)", out).group(1))
    members = int(re.search(r"groups stored: [0-9]+ with ([0-9]+) members", out).group(1))
    return per_rank, members, out


work = tempfile.mkdtemp(prefix="mpe-format-scale-")
per_rank_at = {}
for ranks in SIZES:
    log = os.path.join(work, "r%d.mpelog" % ranks)
    # Two iterations at 16,384 ranks (messages inside and between nodes, collectives); elsewhere
    # the records of MPI_Init, the communicators' creation, the markers and MPI_Finalize.
    events = ranks * 30 if ranks <= 16384 else ranks * 6
    mpe("synth", "--ranks", str(ranks), "--events", str(events), log)
    per_rank, members, text = definitions(log)
    per_rank_at[ranks] = per_rank
    # Four communicators per rank: the node's and the column's groups stored once each (2 members
    # per rank in all), the world's and each rank's own implied: nothing grows with ranks^2.
    mpitest.expect(members == 2 * ranks, "%d ranks: %d members stored, expected %d:\n%s"
                   % (ranks, members, 2 * ranks, text))
    st = json.loads(mpe("stat", "--json", log))
    mpitest.expect(st["ranks"] == ranks, "%d ranks: mpe stat read %r ranks" % (ranks, st["ranks"]))
    if ranks <= 100000:
        waits = json.loads(mpe("waits", "--json", log))
        mpitest.expect(isinstance(waits, dict), "%d ranks: mpe waits --json gave %r" % (ranks, type(waits)))
    if ranks <= 16384:
        # OTF2 3.0's library keeps an archive's locations in a list searched linearly, so 100,000
        # ranks take minutes each way (bench/format_scale.sh measures it): checked here at 16,384.
        archive = os.path.join(work, "r%d-otf2" % ranks)
        mpe("convert", "--to", "otf2", log, archive)
        back = json.loads(mpe("stat", "--json", archive))
        mpitest.expect(back["ranks"] == ranks, "%d ranks: the OTF2 archive holds %r ranks" % (ranks, back["ranks"]))
        mpitest.expect(back["messages"]["matched"] == st["messages"]["matched"] > 0,
                       "%d ranks: messages through OTF2 %r, in the log %r" % (ranks, back["messages"], st["messages"]))
        shutil.rmtree(archive)
    if os.path.exists(UPSHOT):
        image = os.path.join(work, "r%d.png" % ranks)
        p = subprocess.run([UPSHOT, "--export", image, "--preview", log], capture_output=True, text=True,
                           timeout=600, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
        mpitest.expect(p.returncode == 0 and os.path.getsize(image) > 0,
                       "%d ranks: upshot --export --preview exited %d: %s" % (ranks, p.returncode, p.stderr[-2000:]))
    os.remove(log)
    print("%d ranks: %.1f bytes of definitions per rank (decoded), %d members stored; every reader opened it"
          % (ranks, per_rank, members))

smallest = min(per_rank_at.values())
for ranks, per_rank in per_rank_at.items():
    mpitest.expect(per_rank <= smallest * 1.05, "definitions per rank grow with the ranks: %r" % per_rank_at)

# A writer that cannot write says so, exits nonzero and leaves no file.
p = subprocess.run([MPE, "synth", "--ranks", "64", "--events", "100000", "/dev/full"], capture_output=True, text=True)
mpitest.expect(p.returncode != 0 and "No space left" in p.stderr, "synth to a full disk: %d %r" % (p.returncode, p.stderr))
missing = os.path.join(work, "no-such-dir", "x.mpelog")
p = subprocess.run([MPE, "synth", "--ranks", "4", missing], capture_output=True, text=True)
mpitest.expect(p.returncode != 0 and "cannot create" in p.stderr, "synth into a missing directory: %r" % p.stderr)
p = subprocess.run([MPE, "synth", "--ranks", str(2 ** 20 + 1), os.path.join(work, "big.mpelog")], capture_output=True,
                   text=True)
mpitest.expect(p.returncode != 0 and not os.path.exists(os.path.join(work, "big.mpelog")),
               "synth beyond 1,048,576 ranks must be refused")
shutil.rmtree(work)
print("ok")
