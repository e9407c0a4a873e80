"""Runs a message-accounting program (gen_accounting.py) under `mpe run --live --log` and checks
that every tool counts exactly the messages the program says it sent (matrix_counts.<rank>.txt:
its total, and "pair <from> <to> <n>" per destination world rank):

  (a) liblog: every message matched, as many as the program sent, and the program's collectives
      (matrix.check_log, the conformance matrix's own check);
  (b) liblive: the last snapshot `mpe top --json` printed (attached before the job started):
      sends, receives and bytes in total, and sends per (from, to) pair of world ranks (the
      program has none from a rank to itself, so one shows as a difference); receives per pair too
      when the snapshot has them
      ("received_pairs": [{"from": source, "to": receiver, "count", "bytes"}]);
  (c) the log's OTF2 and Chrome exports (`mpe convert`): as many sends and receives (otf2-print),
      and as many arrows, per pair of ranks (Chrome flows: "s" on the sender, "f" on the receiver).

The program runs alone first: it must pass ("No Errors") and print the same under the tools.
`--each` runs every case alone instead (ACCT_ONLY=<routine>): which routine loses a count.
As a ctest test (tests/matrix/CMakeLists.txt, label matrix): MPE_MATRIX_LANG names the language
(c, mpif, usempi, f08); `ctest -R matrix_accounting_c -V` shows the environment to run it by hand.
"""
import collections
import json
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, ".."), os.path.join(HERE, "..", "live"), os.path.join(HERE, "..", "interop")]
import interop_common  # noqa: E402
import livetest  # noqa: E402
import matrix  # noqa: E402
import mpitest  # noqa: E402

NP = matrix.NP
MSG_BYTES = 16  # every message of the templates is 4 ints (a partitioned one 2 x 2)


def expected(workdir):
    """(messages in total, {(from, to): messages}) from the program's own counts."""
    total, pairs = 0, {}
    for r in range(NP):
        with open(os.path.join(workdir, "matrix_counts.%d.txt" % r)) as f:
            for line in f:
                p = line.split()
                if len(p) == 2 and p[0] == "messages":
                    total += int(p[1])
                elif len(p) == 4 and p[0] == "pair":
                    pairs[(int(p[1]), int(p[2]))] = int(p[3])
    return total, pairs


def pair_diffs(what, got, want):
    """Lines naming each (from, to) whose count differs."""
    return ["%s %d -> %d: %d, expected %d" % (what, f, t, got.get((f, t), 0), want.get((f, t), 0))
            for f, t in sorted(set(got) | set(want)) if got.get((f, t), 0) != want.get((f, t), 0)]


def check_live(final, total, pairs):
    """liblive, as `mpe top --json` last saw the job."""
    out = []
    if not final.get("ended") or final.get("exit_status") != 0:
        out.append("live: the last snapshot does not show the job ended with 0: ended=%s exit_status=%s" % (
            final.get("ended"), final.get("exit_status")))
    if final.get("ranks_seen") != NP or final.get("ranks_finalized") != NP:
        out.append("live: ranks seen %s, finalized %s, expected %d" % (
            final.get("ranks_seen"), final.get("ranks_finalized"), NP))
    d = final["drops"]
    lost = {k: d[k] for k in ("frames_lost_in_transit", "frames_dropped_by_ranks", "events_dropped") if d.get(k)}
    if lost:
        out.append("live: lost %r: the counts below cannot be exact" % lost)
    t = final["traffic"]
    for key, want in (("sends", total), ("recvs", total), ("send_bytes", total * MSG_BYTES)):
        if t.get(key) != want:
            out.append("live: %s %s, expected %d" % (key, t.get(key), want))
    sent = {(p["from"], p["to"]): p["count"] for p in t["pairs"]}
    diffs = pair_diffs("sends", sent, pairs)
    diffs += ["sends %d -> %d: %d bytes for %d messages" % (p["from"], p["to"], p["bytes"], p["count"])
              for p in t["pairs"] if p["bytes"] != p["count"] * MSG_BYTES]
    if "received_pairs" in t:
        got = {(p["from"], p["to"]): p["count"] for p in t["received_pairs"]}
        diffs += pair_diffs("receives", got, pairs)
        diffs += ["receives %d -> %d: %d bytes for %d messages" % (p["from"], p["to"], p["bytes"], p["count"])
                  for p in t["received_pairs"] if p["bytes"] != p["count"] * MSG_BYTES]
    else:
        print("note: the snapshot has no received_pairs: receives compared in total only")
    if diffs:
        # over its event budget a rank sends an interval's traffic as totals per peer: pairs built
        # from the events alone then fall short
        why = " (%d intervals aggregated per peer)" % d["aggregated_intervals"] if d.get("aggregated_intervals") else ""
        out.append("live: per pair of world ranks%s:\n      %s" % (why, "\n      ".join(diffs)))
    return out


def otf2_counts(log, workdir):
    """(sends, receives) in the log's OTF2 export, by otf2-print; None when otf2-print is missing."""
    if not shutil.which("otf2-print"):
        return None
    archive = os.path.join(workdir, "export-otf2")
    p = mpitest.mpe("convert", log, "--to", "otf2", archive, check=False)
    if p.returncode != 0:
        return "mpe convert --to otf2 exited %d: %s" % (p.returncode, p.stderr.strip())
    c = interop_common.otf2_print_counts(archive)
    return c["MPI_SEND"] + c["MPI_ISEND"], c["MPI_RECV"] + c["MPI_IRECV"]


def chrome_pairs(log, workdir):
    """{(from, to): arrows} of the log's Chrome export, and the count of flow ends without a partner."""
    out = os.path.join(workdir, "export.json")
    p = mpitest.mpe("convert", log, "--to", "chrome", out, check=False)
    if p.returncode != 0:
        return "mpe convert --to chrome exited %d: %s" % (p.returncode, p.stderr.strip()), 0
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    ends = collections.defaultdict(dict)
    for e in events:
        if e["ph"] in ("s", "f"):
            ends[e["id"]][e["ph"]] = e["pid"]
    pairs = collections.Counter((v["s"], v["f"]) for v in ends.values() if len(v) == 2)
    return dict(pairs), sum(1 for v in ends.values() if len(v) != 2)


def check_exports(workdir, total, pairs):
    """(c): the OTF2 and Chrome exports of liblog's log."""
    log = os.path.join(workdir, matrix.PREFIX + ".mpelog")
    if not os.path.exists(log):
        return []  # check_log said so
    out = []
    otf2 = otf2_counts(log, workdir)
    if otf2 is None:
        print("SKIP: no otf2-print; the OTF2 export's counts are not checked")
    elif isinstance(otf2, str):
        out.append("otf2: " + otf2)
    elif otf2 != (total, total):
        out.append("otf2: %d sends (MpiSend + MpiIsend), %d receives (MpiRecv + MpiIrecv), expected %d each" % (
            otf2 + (total,)))
    arrows, loose = chrome_pairs(log, workdir)
    if isinstance(arrows, str):
        return out + ["chrome: " + arrows]
    if sum(arrows.values()) != total or loose:
        out.append("chrome: %d arrows (and %d flow ends without a partner), expected %d" % (
            sum(arrows.values()), loose, total))
    diffs = pair_diffs("arrows", arrows, pairs)
    if diffs:
        out.append("chrome: per pair of ranks:\n      " + "\n      ".join(diffs))
    return out


def run_live(prog, env=None):
    """Runs prog under `mpe run --live --log` with `mpe top --json` attached first; returns
    (job, snapshots, top's stderr, seconds)."""
    workdir = tempfile.mkdtemp(prefix="mpeacct-")
    top = livetest.Top(os.path.join(workdir, matrix.PREFIX + ".live"), refresh=0.5, wait=30)
    t0 = time.time()
    full_env = {"MPE_QUIET": "1", "MPE_LOGFILE_PREFIX": matrix.PREFIX}
    full_env.update(env or {})
    job = livetest.LiveJob(NP, [prog], log=True, workdir=workdir, prefix=matrix.PREFIX, env=full_env)
    job.finish(timeout=300, expect_rc=None)
    seconds = time.time() - t0
    snaps = top.snapshots(timeout=90)
    return job, snaps, getattr(top, "stderr", ""), seconds


def check_run(prog, plain=None, env=None):
    """Runs prog under the tools and checks (a), (b) and (c) against the program's own counts, and
    its output against the plain run's when given. Returns (failures, job, seconds)."""
    job, snaps, top_err, seconds = run_live(prog, env)
    if job.proc.returncode != 0:
        return ["exit %s under mpe run --live --log:\n%s" % (job.proc.returncode, job.stderr[-3000:])], job, seconds
    if plain is not None and job.stdout != plain.stdout:
        return ["output differs from the plain run:\n--- plain\n%s--- tools\n%s" % (plain.stdout, job.stdout)], \
            job, seconds
    if "No Errors" not in job.stdout:
        return ["the program failed under the tools:\n%s" % job.stdout], job, seconds
    total, pairs = expected(job.workdir)
    failures = matrix.check_log(job.workdir, NP)
    failures += check_live(snaps[-1], total, pairs) if snaps else [
        "live: mpe top printed no snapshot: %s" % top_err.strip()]
    return failures + check_exports(job.workdir, total, pairs), job, seconds


def each(prog, cases):
    """Runs every case alone (ACCT_ONLY) and prints which checks each fails: where a count is lost."""
    bad = 0
    for name in cases:
        failures, job, seconds = check_run(prog, env={"ACCT_ONLY": name})
        if failures:
            bad += 1
            print("FAIL %s (%.1f s):\n  %s" % (name, seconds, "\n  ".join(failures)), flush=True)
        else:
            print("ok   %-26s (%.1f s)" % (name, seconds), flush=True)
        shutil.rmtree(job.workdir, ignore_errors=True)
    # A count that only the whole program misses comes from cases together (a request or a probed
    # message one case leaves behind, taken by another): bisect with ACCT_ONLY=<a>,<b>,...
    print("%d of %d cases failed alone" % (bad, len(cases)))
    return bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    lang = os.environ.get("MPE_MATRIX_LANG") or (args[0] if args else "c")
    with open(os.path.join(matrix.matrix_dir(), "acct_coverage.json")) as f:
        cov = json.load(f)
    L = cov["languages"][lang]
    prog = mpitest.program("acct_" + lang)
    if "--each" in sys.argv:
        sys.exit(1 if each(prog, L["cases"]) else 0)
    t0 = time.time()
    plain = matrix.launch(prog)
    if plain.rc != 0 or "No Errors" not in plain.stdout:
        mpitest.fail("%s fails without tools (exit %s):\n%s\n%s\nreproduce: %s" % (
            prog, plain.rc, plain.stdout, plain.stderr[-3000:], plain.reproducer()))
    total, pairs = expected(plain.workdir)
    print("plain: %d messages, pairs %s (%.1f s)" % (
        total, " ".join("%d->%d:%d" % (k + (v,)) for k, v in sorted(pairs.items())), plain.seconds), flush=True)
    failures, job, seconds = check_run(prog, plain)
    shutil.rmtree(plain.workdir, ignore_errors=True)
    name = os.path.basename(prog)
    print("coverage (%s, %s): %d cases, each on MPI_COMM_WORLD (%d iterations) and a reversed communicator "
          "(%d): %s; helpers %s" % (L["name"], cov["mpi"], len(L["cases"]), cov["iterations"][0],
                                    cov["iterations"][1], " ".join(L["cases"]), " ".join(L["helpers"]) or "none"))
    for routine, why in sorted(L["skipped"].items()):
        print("  skipped %s: %s" % (routine, why))
    if failures:
        print("FAIL %s under mpe run --live --log (%.1f s):\n  %s\n  kept: %s\n  which cases: MPE_MATRIX_LANG=%s "
              "python3 %s --each (with ctest's environment)" % (
                  name, seconds, "\n  ".join(failures), job.workdir, lang, os.path.abspath(__file__)), flush=True)
        mpitest.fail("%s: %d checks failed (%.0f s)" % (name, len(failures), time.time() - t0))
    shutil.rmtree(job.workdir, ignore_errors=True)
    print("ok   %s under mpe run --live --log (%.1f s): %d messages counted exactly by liblog, liblive, "
          "OTF2 and Chrome (%.0f s in all)" % (name, seconds, total, time.time() - t0))


if __name__ == "__main__":
    main()
