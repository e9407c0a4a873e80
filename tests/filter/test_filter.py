"""MPE_LOG_FILTER (issue 40): every rule of a filter file, with exact counts against the same
program's unfiltered log, under liblog on 4 ranks (the pcontrol sample, whose calls are known) and
on 2 (a poller of 2 M MPI_Iprobe with 20 messages); bad lines; `mpe cut --filter` on the unfiltered
log gives the filtered run's states; liblive under a filter."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "live"))
import livetest  # noqa: E402
import mpitest  # noqa: E402

NP = 4
SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                      "samples", "pcontrol.c")
POLLS = 50000  # iprobe_poll: 20 x 50,000 Iprobe on each of 2 ranks


def logged(prog, np, rules=None, args=(), env=None):
    """Runs prog under liblog (with the rules as MPE_LOG_FILTER) and returns (run, stat JSON)."""
    env = dict(env or {})
    r = None
    if rules is not None:
        r = mpitest.Run(0, "", "", tempfile.mkdtemp(prefix="mpetest-filter-"))
        path = os.path.join(r.workdir, "filter.txt")
        with open(path, "w") as f:
            f.write(rules)
        env["MPE_LOG_FILTER"] = path
    run = mpitest.run(np, [mpitest.program(prog)] + list(args), tools=("log",), env=env,
                      workdir=r.workdir if r else None)
    log = run.files(".mpelog")[0]
    return run, json.loads(mpitest.mpe("stat", "--json", log).stdout)


def states(stat):
    return {name: s["count"] for name, s in stat["states"].items()}


def per_rank(stat):
    return {int(r): m for r, m in stat["states_per_rank"].items()}


def without(counts, *names):
    return {k: v for k, v in counts.items() if k not in names}


def check_upshot_says(log, note):
    """upshot --export says what the filter left out (the window shows it in its status bar)."""
    upshot = os.path.join(mpitest.BUILD, "bin", "upshot")
    if not os.path.exists(upshot):  # the Open MPI build has no viewer
        return
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_RUNTIME_DIR=tempfile.mkdtemp(prefix="mpetest-xdg-"))
    p = subprocess.run([upshot, "--export", log + ".png", log], env=env, capture_output=True, text=True, timeout=120)
    mpitest.expect(p.returncode == 0 and ("upshot: " + note) in p.stderr, "upshot --export: %r" % p.stderr)


def check_routine_rules(base):
    """exclude routine; exclude MPI_* then include one back; drop messages."""
    run, st = logged("pcontrol", NP, "# the collectives' states go, their records stay\nexclude routine MPI_Allreduce\n")
    mpitest.expect_eq(states(st), without(states(base), "MPI_Allreduce"), "states without MPI_Allreduce")
    mpitest.expect_eq(st["filter"]["left_out"], {"MPI_Allreduce": states(base)["MPI_Allreduce"]},
                      "calls left out, by routine")
    mpitest.expect_eq(st["collectives"], base["collectives"], "collective records kept")
    mpitest.expect_eq(st["messages"], base["messages"], "messages kept")
    text = mpitest.mpe("stat", run.files(".mpelog")[0]).stdout
    n = states(base)["MPI_Allreduce"]
    mpitest.expect("filter:     exclude routine MPI_Allreduce (on 4 ranks)" in text and
                   "left out:   %d calls: MPI_Allreduce %d" % (n, n) in text, "mpe stat says what was left out:\n" + text)
    check_upshot_says(run.files(".mpelog")[0], "filtered (exclude routine MPI_Allreduce): %d calls left out" % n)
    waits = mpitest.mpe("waits", run.files(".mpelog")[0]).stdout
    mpitest.expect(waits.startswith("filtered (exclude routine MPI_Allreduce): %d calls left out"
                                    % states(base)["MPI_Allreduce"]), "mpe waits says so:\n" + waits[:300])

    _, st = logged("pcontrol", NP, "exclude routine MPI_*\ninclude routine MPI_Sendrecv MPI_Barrier\n")
    mpitest.expect_eq(states(st), {k: v for k, v in states(base).items() if k in ("MPI_Sendrecv", "MPI_Barrier")},
                      "only the routines included back")
    mpitest.expect_eq(sum(st["filter"]["left_out"].values()),
                      sum(without(states(base), "MPI_Sendrecv", "MPI_Barrier").values()), "calls left out")

    _, st = logged("pcontrol", NP, "exclude routine MPI_Sendrecv\ndrop messages\n")
    mpitest.expect_eq(states(st), without(states(base), "MPI_Sendrecv"), "states without MPI_Sendrecv")
    mpitest.expect(st["messages"]["matched"] == 0 and st["messages"]["unmatched_sends"] == 0 and
                   st["messages"]["unmatched_recvs"] == 0, "drop messages: %r" % st["messages"])
    mpitest.expect_eq(st["collectives"], base["collectives"], "other routines' records kept")


def check_site_rules(base):
    """exclude site FILE:LINE and a function glob (the sample's helpers)."""
    line = mpitest.marked_line(SAMPLE, "MPI_Sendrecv(&mine")
    _, st = logged("pcontrol", NP, "exclude site pcontrol.c:%d\nexclude site checked_allr*\n" % line)
    mpitest.expect_eq(states(st), without(states(base), "MPI_Sendrecv", "MPI_Allreduce"), "states without the sites")
    mpitest.expect_eq(st["filter"]["left_out"], {"MPI_Allreduce": states(base)["MPI_Allreduce"],
                                                 "MPI_Sendrecv": states(base)["MPI_Sendrecv"]}, "left out by site")
    mpitest.expect_eq(st["messages"], base["messages"], "messages of the left-out sites kept")


def check_rank_and_pcontrol_rules(base):
    _, st = logged("pcontrol", NP, "only ranks 1-3:2\n")
    mpitest.expect_eq(sorted(r for r, m in per_rank(st).items() if m), [1, 3], "ranks with states")
    for r in (1, 3):
        mpitest.expect_eq(per_rank(st)[r], per_rank(base)[r], "rank %d's states" % r)
    # Level 0 only: off from the start (level 1), on after MPI_Pcontrol(0): the calls after the region.
    _, st = logged("pcontrol", NP, "only pcontrol 0\n")
    after = {"MPI_Allreduce": NP, "MPI_Barrier": NP, "MPI_Sendrecv": NP, "MPI_Finalize": NP, "MPI_Pcontrol": 2 * NP}
    mpitest.expect_eq(states(st), after, "states recorded at Pcontrol level 0 only")


def check_bad_filters(base):
    run, st = logged("pcontrol", NP, "exclude routine MPI_Barrier\nexclud routine MPI_Allreduce\n")
    lines = [l for l in run.stderr.splitlines() if "MPE_LOG_FILTER" in l]
    mpitest.expect(len(lines) == 1 and "filter.txt:2: unknown rule 'exclud routine MPI_Allreduce'" in lines[0] and
                   "without a filter" in lines[0], "one line naming the bad line: %r" % run.stderr)
    mpitest.expect_eq(states(st), states(base), "a bad filter: the run is logged unfiltered")
    mpitest.expect("filter" not in st, "no filter recorded")
    for rules, what in (("only ranks 3-1\n", "bad rank range '3-1'"), ("exclude site x.c:0\n", "FILE:LINE"),
                        ("only pcontrol a\n", "bad Pcontrol levels"), ("drop\n", "unknown rule")):
        run, _ = logged("pcontrol", NP, rules)
        mpitest.expect(run.stderr.count("MPE_LOG_FILTER") == 1 and what in run.stderr,
                       "%r: %r" % (rules, run.stderr))
    # `mpe run --filter` says it once, before the run, which goes on without the filter.
    workdir = tempfile.mkdtemp(prefix="mpetest-filter-")
    with open(os.path.join(workdir, "bad.txt"), "w") as f:
        f.write("only ranks\n")
    p = subprocess.run(
        [mpitest.MPE_COMMAND, "run", "--log", "--filter", os.path.join(workdir, "bad.txt"), "--", mpitest.MPIEXEC] +
        mpitest.MPIEXEC_FLAGS + ["-n", "2", mpitest.program("pcontrol")],
        cwd=workdir, capture_output=True, text=True, timeout=120)
    mpitest.expect(p.returncode == 0 and p.stderr.count("bad.txt:1: unknown rule 'only ranks'") == 1,
                   "mpe run --filter with a bad line: rc %d\n%s" % (p.returncode, p.stderr))


def check_poller():
    """The issue's figure: 2 M MPI_Iprobe on 2 ranks, the log with them left out."""
    full_run, full = logged("iprobe_poll", 2, args=(str(POLLS),))
    run, st = logged("iprobe_poll", 2, "exclude routine MPI_Iprobe\n", args=(str(POLLS),))
    calls = 2 * 20 * POLLS
    mpitest.expect_eq(states(full)["MPI_Iprobe"], calls, "Iprobe states unfiltered")
    mpitest.expect_eq(st["filter"]["left_out"], {"MPI_Iprobe": calls}, "Iprobe calls left out")
    mpitest.expect("MPI_Iprobe" not in states(st), "no Iprobe state")
    mpitest.expect(st["messages"]["matched"] == 20 and st["messages"]["unmatched_sends"] == 0 and
                   st["messages"]["unmatched_recvs"] == 0, "the 20 messages match: %r" % st["messages"])
    a, b = os.path.getsize(full_run.files(".mpelog")[0]), os.path.getsize(run.files(".mpelog")[0])
    mpitest.expect(b <= a / 10, "filtered log %d bytes against %d unfiltered (at most 10%%)" % (b, a))
    print("poller: %d Iprobe left out; log %d bytes against %d (%.1f%%)" % (calls, b, a, 100.0 * b / a))
    return full_run


def check_cut(base_run, base):
    """mpe cut --filter on the unfiltered log: the filtered run's states, and it says so."""
    workdir = base_run.workdir
    with open(os.path.join(workdir, "cut.txt"), "w") as f:
        f.write("exclude routine MPI_Allreduce MPI_Comm_*\n")
    out = os.path.join(workdir, "cut.mpelog")
    mpitest.mpe("cut", base_run.files(".mpelog")[0], "-o", out, "--filter", os.path.join(workdir, "cut.txt"))
    st = json.loads(mpitest.mpe("stat", "--json", out).stdout)
    mpitest.expect_eq(states(st), without(states(base), "MPI_Allreduce", "MPI_Comm_rank", "MPI_Comm_size"),
                      "cut states")
    mpitest.expect_eq(st["filter"]["left_out"], {k: states(base)[k] for k in
                                                 ("MPI_Allreduce", "MPI_Comm_rank", "MPI_Comm_size")}, "cut left out")
    mpitest.expect_eq(st["messages"], base["messages"], "cut messages")
    mpitest.expect_eq(st["collectives"], base["collectives"], "cut collectives")


def check_live():
    """liblive and liblog under one filter (`mpe run --live --log`), on tests/live/isendrecv_ring.c's 240
    messages: with its 3 MPI_Mrecv left out and `drop messages`, both count 240 sends and 237 receives."""
    workdir = tempfile.mkdtemp(prefix="mpetest-filter-live-")
    path = os.path.join(workdir, "filter.txt")
    with open(path, "w") as f:
        f.write("exclude routine MPI_Mprobe MPI_Mrecv\ndrop messages\n")
    job = livetest.LiveJob(3, [mpitest.program("isendrecv_ring")], log=True, env={"MPE_LOG_FILTER": path},
                           workdir=workdir)
    top = livetest.Top(job.wait_live_file(), refresh=0.5)
    job.finish(timeout=300)
    snaps = top.snapshots(timeout=120)
    mpitest.expect(job.stdout.strip().endswith("ok"), "the program's own check: %r" % job.stdout)
    mpitest.expect(snaps and snaps[-1].get("ended"), "mpe top saw the job end")
    traffic = snaps[-1]["traffic"]
    mpitest.expect_eq((traffic["sends"], traffic["recvs"]), (240, 237), "liblive's (sends, receives)")
    st = json.loads(mpitest.mpe("stat", "--json", os.path.join(workdir, "isendrecv_ring.mpelog")).stdout)
    mpitest.expect_eq((st["messages"]["matched"], st["messages"]["unmatched_sends"],
                       st["messages"]["unmatched_recvs"]), (237, 3, 0), "liblog's messages")
    mpitest.expect_eq(st["filter"]["left_out"], {"MPI_Mprobe": 3, "MPI_Mrecv": 3}, "liblog's calls left out")


def main():
    base_run, base = logged("pcontrol", NP)
    mpitest.expect("filter" not in base, "an unfiltered log has no filter")
    check_routine_rules(base)
    check_site_rules(base)
    check_rank_and_pcontrol_rules(base)
    check_bad_filters(base)
    check_cut(base_run, base)
    check_poller()
    check_live()
    print("filter: every rule against the unfiltered log, exactly")


main()
