"""Interop group callsites: liblog's call sites as OTF2 calling contexts, out and back."""
import collections
import json
import os
import subprocess
import sys

import mpitest
from interop_common import SYSTEM_PYTHON, check_archive, liblog_counts, mpe, site_table, stat, state_lines


# Each CallingContextEnter's state and call site as a third-party reader finds them in the archive:
# the context's region is the state; its unwound frames are its ancestors of paradigm SAMPLING,
# innermost first, each "file:line" from its source code location.
CS_READER = r"""
import collections, json, os, sys
import otf2
out = collections.Counter()
with otf2.reader.open(sys.argv[1]) as r:
    for loc, ev in r.events:
        if type(ev).__name__ != "CallingContextEnter":
            continue
        frames, p = [], ev.calling_context.parent
        while p is not None and str(p.region.paradigm).endswith("SAMPLING"):
            s = p.source_code_location
            frames.append("%s:%d" % (os.path.basename(str(s.file)), s.line_number) if s else "?")
            p = p.parent
        out[json.dumps([str(ev.calling_context.region.name)] + frames)] += 1
print(json.dumps(out))
"""


def callsites():
    """bin/callsites on 4 ranks under liblog: every state of the log has its call site, with the
    sample's known counts per source line; the OTF2 archives (liblog's, in parallel, and mpe
    convert's) hold them as calling contexts that OTF2's own reader finds; and reading the
    archives back gives every state its call site again, with the same frames."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "callsites"))
    import callsites as cs  # noqa: E402  (tests/callsites/callsites.py: lines and true counts)
    for depth in (1, 3):
        r = mpitest.run(4, [mpitest.program("callsites")], tools=("log",),
                        env={"MPE_LOG_FORMAT": "both", "MPE_LOGFILE_PREFIX": "cs", "MPE_CALLSITE_DEPTH": str(depth)})
        log, archive = os.path.join(r.workdir, "cs.mpelog"), os.path.join(r.workdir, "cs.otf2")
        what = "callsites, MPE_CALLSITE_DEPTH=%d" % depth
        # The log: liblog gave every state a call site; each marked line has its true count.
        lines = state_lines(log)
        mpitest.expect(lines and all(" at " in line for line in lines),
                       "%s: states without a call site in the log:\n%s" % (what, "\n".join(
                           line for line in lines if " at " not in line)[:2000]))
        want = {}
        for site, (source, routine, calls, _) in cs.C_SITES.items():
            name, line = cs.line_of(site, source)
            want[(routine, "%s:%d" % (name, line))] = calls * len(cs.ranks_making(site, 4))
        got = collections.Counter()
        for line in lines:  # "... state NAME depth=D at FILE:LINE (FUNC) <- ..."
            f = line.split(" ")
            got[(f[3], line.split(" at ", 1)[1].split(" ")[0])] += 1
        for key, n in want.items():
            mpitest.expect_eq(got[key], n, "%s: %s calls at %s in the log" % (what, key[0], key[1]))
        st = stat(log)
        sites = site_table(st)
        mpitest.expect(all(len(frames) == depth for _, frames in sites.values()),
                       "%s: sites of other than %d frames: %r" % (what, depth, sites))
        converted = os.path.join(r.workdir, "converted")
        mpe("convert", log, "--to", "otf2", converted)
        for source, arch in (("liblog", archive), ("convert", converted)):
            w = "%s, %s's OTF2" % (what, source)
            check_archive(arch, st, w, liblog_counts(st, log))
            # Calling contexts as OTF2's own Python reader finds them (check_archive made sure it is there).
            p = subprocess.run([SYSTEM_PYTHON, "-c", CS_READER, os.path.join(arch, "traces.otf2")],
                               capture_output=True, text=True, timeout=300)
            mpitest.expect(p.returncode == 0, "%s: the OTF2 Python reader failed:\n%s" % (w, p.stderr[-2000:]))
            seen = collections.Counter()
            for key, n in json.loads(p.stdout).items():
                k = json.loads(key)
                mpitest.expect_eq(len(k) - 1, depth, "%s: frames of %s" % (w, k))
                seen[(k[0], k[1])] += n
            for key, n in want.items():
                mpitest.expect_eq(seen[key], n, "%s: %s calls at %s (OTF2 Python reader)" % (w, key[0], key[1]))
            if depth == 3:
                deep = ["MPI_Allreduce"] + ["%s:%d" % cs.line_of(m, "callsites.c")
                                            for m in ("deep_allreduce", "deep_layer_one", "deep_main")]
                mpitest.expect_eq(sum(n for key, n in json.loads(p.stdout).items() if json.loads(key) == deep),
                                  16, w + ": deep_allreduce's three frames")
            # Back to .mpelog: every state keeps its call site (file:line and function of every
            # frame), and the per-site counts are equal.
            back = os.path.join(r.workdir, "back-%s.mpelog" % source)
            mpe("convert", arch, "--to", "mpelog", back)
            mpitest.expect(state_lines(back) == lines, "%s: states or their call sites differ after the round trip"
                           % w)
            mpitest.expect_eq(site_table(stat(back)), sites, w + ": call sites (count, frames with module)")
        mpitest.cleanup(r)
    print("callsites: liblog's call sites go through OTF2 calling contexts and come back on every state")
