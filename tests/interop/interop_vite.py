"""Interop group vite: ViTE opens and exports liblog's and `mpe convert`'s archives."""
import os
import shutil
import subprocess
import xml.etree.ElementTree

import mpitest
from interop_common import check_archive, expect_messages, liblog_counts, mpe, run_logged, stat


# ViTE (Debian's `vite`) reads OTF2 as Score-P writes it: it cannot resolve a communicator's group
# and takes a message's rank for its location id, which with Score-P's numbering (rank r's master
# thread is location r) is a real location. (program, ranks, arguments): a Cartesian
# communicator in world order, a sub-communicator in reverse order with MPI_COMM_SELF messages,
# several threads per rank.
VITE_RUNS = [("halo2d", 4, ["10"]), ("subcomm", 4, ["5"]), ("threads", 2, ["20"])]


def vite_export(archive, svg):
    """ViTE's SVG export of the archive (run headless under xvfb-run; it must exit 0): the tag of
    every element and the text of every text element."""
    for tool, package in (("vite", "vite"), ("xvfb-run", "xvfb")):
        mpitest.expect(shutil.which(tool), "%s is not installed (Debian package %s; scripts/test installs it)"
                       % (tool, package))
    p = subprocess.run(["xvfb-run", "-a", "vite", os.path.join(archive, "traces.otf2"), "-e", svg],
                       capture_output=True, text=True, timeout=300)
    mpitest.expect(p.returncode == 0 and os.path.exists(svg),
                   "vite on %s exited %d:\n%s" % (archive, p.returncode, (p.stdout + p.stderr)[-2000:]))
    elements = list(xml.etree.ElementTree.parse(svg).iter())
    tags = [e.tag.split("}")[-1] for e in elements]
    return tags, [e.text or "" for e, tag in zip(elements, tags) if tag == "text"]


def vite():
    for prog, np, args in VITE_RUNS:
        r, log, archive = run_logged(prog, np, args)
        st = stat(log)
        expect_messages(prog, st)
        converted = os.path.join(r.workdir, "converted")
        mpe("convert", log, "--to", "otf2", converted)
        for path, how in ((archive, "liblog"), (converted, "mpe convert")):
            what = "%s (%s)" % (prog, how)
            check_archive(path, st, what, liblog_counts(st, log))  # otf2-print: no error, our counts
            tags, texts = vite_export(path, os.path.join(r.workdir, how.replace(" ", "_") + ".svg"))
            # ViTE labels each location "<name>_<id>": Score-P's ids, thread t of rank r (t << 32) | r.
            threads = {rank: max(1, int(st["threads"].get(str(rank), 0))) for rank in range(np)}
            want = sorted((t << 32) | rank for rank in range(np) for t in range(threads[rank]))
            got = sorted(int(x.rsplit("_", 1)[1]) for x in texts if x.startswith(("Master thread_", "Thread ")))
            mpitest.expect_eq(got, want, what + ": the locations ViTE shows, by id")
            if prog == "halo2d":  # its communicator is in world order: ViTE draws every message
                mpitest.expect_eq(tags.count("line"), st["messages"]["matched"], what + ": arrows ViTE draws")
        mpitest.cleanup(r)
    print("vite: ViTE opens and exports liblog's and mpe convert's archives of %s"
          % ", ".join(p for p, _, _ in VITE_RUNS))
