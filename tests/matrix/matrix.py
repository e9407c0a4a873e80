"""Runs the generated conformance matrix programs plain and under the tools, and checks each run.

A run under the tools passes when it exits as the plain run does and prints the same output;
libmpetime counted every routine as often as the program says it called it (matrix_counts.<rank>.txt
against <prefix>.mpetime.<rank>.txt); and liblog's log has every message matched and exactly the
program's numbers of messages, collectives, one-sided operations and Pcontrol markers (`mpe stat
--json`).

As a ctest test (tests/matrix/CMakeLists.txt): MPE_MATRIX_LANG names the language (c, mpif, usempi,
f08); the program runs plain, under each tool alone and under all three (`ctest --test-dir build -L
matrix` runs the four; `MPE_MATRIX_LANG=c MPE_BUILD_DIR=build ... python3 tests/matrix/matrix.py` is
what ctest runs, see `ctest -R matrix_c -V`). As a library (e.g. a
sanitizer build of the tools): check_program(prog, tool_libs, np) runs one program under any tool
libraries and returns the failures; programs() lists the built matrix programs.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

NP = 4  # the generated programs need 4 ranks (gen_matrix.NP)
TOOL_SETS = [("time",), ("umq",), ("log",), ("time", "umq", "log")]
PREFIX = "matrix"  # MPE_LOGFILE_PREFIX of every run
COUNT_KEYS = ("messages", "collectives", "rma", "markers")


def matrix_dir():
    return os.environ.get("MPE_MATRIX_DIR") or os.path.join(mpitest.BUILD, "tests", "matrix")


def programs():
    """Paths of the built matrix programs (MPE_MATRIX_PROGRAMS: their names, comma-separated)."""
    names = [n for n in os.environ.get("MPE_MATRIX_PROGRAMS", "matrix_c,matrix_mpif,matrix_usempi,matrix_f08")
             .split(",") if n]
    return [mpitest.program(n) for n in names]


def coverage():
    with open(os.path.join(matrix_dir(), "coverage.json")) as f:
        return json.load(f)


class Result:
    def __init__(self, cmd, rc, stdout, stderr, workdir, seconds):
        self.cmd, self.rc, self.stdout, self.stderr, self.workdir, self.seconds = (
            cmd, rc, stdout, stderr, workdir, seconds)

    def reproducer(self):
        env = "MPE_QUIET=1 MPE_LOGFILE_PREFIX=%s" % PREFIX
        return "cd $(mktemp -d) && %s %s" % (env, " ".join(shlex.quote(c) for c in self.cmd))


def launch(prog, tool_libs=(), np=NP, timeout=300):
    """Runs prog on np ranks with tool_libs preloaded, in a fresh directory; returns a Result."""
    workdir = tempfile.mkdtemp(prefix="mpematrix-")
    env = dict(os.environ)
    # MPE_QUIET: the tools' info lines would differ from the plain run's output
    env.update({"MPE_QUIET": "1", "MPE_LOGFILE_PREFIX": PREFIX})
    cmd = [mpitest.MPIEXEC] + mpitest.MPIEXEC_FLAGS + ["-n", str(np)]
    if tool_libs:
        preload = ":".join(tool_libs)
        cmd += (["-x", "LD_PRELOAD=" + preload] if mpitest.MPI == "openmpi" else ["-genv", "LD_PRELOAD", preload])
    cmd.append(prog)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout after %d s" % timeout, e.stdout or "", e.stderr or ""
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        err = err.decode(errors="replace") if isinstance(err, bytes) else err
    return Result(cmd, rc, out, err, workdir, time.time() - t0)


def read_counts(path):
    """A rank's matrix_counts file: {routine or counter: n}."""
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                out[parts[0]] = int(parts[1])
    return out


def read_mpetime(path):
    """The routines section of a libmpetime per-process file: {routine: calls}."""
    out = {}
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines) and not lines[i].startswith("routines "):
        i += 1
    if i == len(lines):
        raise ValueError("%s: no routines section" % path)
    n = int(lines[i].split()[1])
    i += 1
    while n > 0 and i < len(lines):
        if lines[i].startswith("#") or not lines[i].strip():
            i += 1
            continue
        parts = lines[i].split()
        out[parts[0]] = int(parts[1])
        n -= 1
        i += 1
    return out


def tool_kinds(tool_libs):
    """Which checks apply: a library named like libmpetime / liblog (any build of them)."""
    names = [os.path.basename(p) for p in tool_libs]
    return {"time": any("mpetime" in n for n in names), "log": any(n.startswith("liblog") for n in names)}


def check_counts(workdir, np):
    """libmpetime's count of every routine equals the program's, rank by rank."""
    failures = []
    for r in range(np):
        mine = os.path.join(workdir, "matrix_counts.%d.txt" % r)
        theirs = os.path.join(workdir, "%s.mpetime.%d.txt" % (PREFIX, r))
        if not os.path.exists(mine):
            return ["rank %d wrote no matrix_counts file" % r]
        if not os.path.exists(theirs):
            failures.append("libmpetime wrote no %s.mpetime.%d.txt" % (PREFIX, r))
            continue
        want = {k: v for k, v in read_counts(mine).items() if k not in COUNT_KEYS}
        got = read_mpetime(theirs)
        diffs = ["%s: program called %d, libmpetime counted %d" % (k, want.get(k, 0), got.get(k, 0))
                 for k in sorted(set(want) | set(got)) if want.get(k, 0) != got.get(k, 0)]
        if diffs:
            failures.append("rank %d: %d routines counted wrong:\n      %s" % (r, len(diffs), "\n      ".join(diffs)))
    return failures


def check_log(workdir, np):
    """liblog's log: every message matched; messages, collectives, one-sided operations and Pcontrol
    markers exactly as many as the program made (summed over the ranks)."""
    log = os.path.join(workdir, PREFIX + ".mpelog")
    if not os.path.exists(log):
        return ["liblog wrote no %s.mpelog" % PREFIX]
    want = {k: 0 for k in COUNT_KEYS}
    for r in range(np):
        c = read_counts(os.path.join(workdir, "matrix_counts.%d.txt" % r))
        for k in COUNT_KEYS:
            want[k] += c.get(k, 0)
    p = mpitest.mpe("stat", "--json", log, check=False)
    if p.returncode != 0:
        return ["mpe stat --json %s exited %d: %s" % (log, p.returncode, p.stderr.strip())]
    s = json.loads(p.stdout)
    got = {"messages": s["messages"]["matched"], "unmatched sends": s["messages"]["unmatched_sends"],
           "unmatched receives": s["messages"]["unmatched_recvs"], "collectives": s["collectives"],
           "rma": s["rma"]["operations"], "markers": s["markers"]}
    expected = {"messages": want["messages"], "unmatched sends": 0, "unmatched receives": 0,
                "collectives": want["collectives"], "rma": want["rma"], "markers": want["markers"]}
    failures = ["log: %s %d, expected %d" % (k, got[k], expected[k]) for k in expected if got[k] != expected[k]]
    if failures:
        failures.append("log: bytes received, by the routine that completed the receive:\n"
                        "      " + received_by_routine(s))
        unmatched = [l for l in mpitest.mpe("print", "--kind", "recv", log, check=False).stdout.split("\n")
                     if "unmatched" in l]
        if unmatched:
            failures.append("log: unmatched receives (first 10):\n      " + "\n      ".join(unmatched[:10]))
    return failures


def received_by_routine(stat):
    """Bytes of messages received per routine, from `mpe stat --json`'s call sites: where receives went missing."""
    agg = {}
    for site in stat.get("callsites", []):
        # only the routines that complete a point-to-point receive (the others' bytes are collectives')
        if re.match(r"MPI_(Wait|Test|Recv|Mrecv|Imrecv|Sendrecv|Isendrecv|Request)", site["state"]):
            agg[site["state"]] = agg.get(site["state"], 0) + site["bytes_received"]
    return " ".join("%s=%d" % (k, v) for k, v in sorted(agg.items()) if v)


def check_program(prog, tool_libs, np=NP, plain=None):
    """Runs prog under tool_libs (paths of tool libraries to preload) and checks it against the plain
    run (made here unless given). Returns (failures, result): failures is a list of strings, empty
    when the run passed; the run's directory is removed when it passed."""
    if plain is None:
        plain = launch(prog, (), np)
    failures = []
    r = launch(prog, tool_libs, np)
    if r.rc != plain.rc:
        failures.append("exit %s, plain %s\n    stderr: %s" % (r.rc, plain.rc, r.stderr.strip()[-3000:]))
    elif r.stdout != plain.stdout:
        failures.append("output differs from the plain run:\n--- plain\n%s--- tools\n%s" % (plain.stdout, r.stdout))
    if not failures:
        kinds = tool_kinds(tool_libs)
        if kinds["time"]:
            failures += check_counts(r.workdir, np)
        if kinds["log"]:
            failures += check_log(r.workdir, np)
    if not failures:
        shutil.rmtree(r.workdir, ignore_errors=True)
    return failures, r


def coverage_statement(cov, lang):
    """What the matrix covers in one language, what it skips and why, and what it leaves out."""
    L = cov["languages"][lang]
    lines = ["coverage (%s, %s): %d routines of the table called: %s" % (
        L["name"], cov["mpi"], len(L["tested"]), " ".join(L["tested"]))]
    by_reason = {}
    for name, why in sorted(L["skipped"].items()):
        by_reason.setdefault(why, []).append(name)
    for why, names in sorted(by_reason.items()):
        lines.append("  skipped, %s: %s" % (why, " ".join(names)))
    left = {}
    for name, why in sorted(cov["left_out"].items()):
        left.setdefault(why, []).append(name)
    for why, names in sorted(left.items()):
        lines.append("  left out, %s: %d routines (%s%s)" % (why, len(names), " ".join(names[:6]),
                                                             " ..." if len(names) > 6 else ""))
    lines.append("  not in the matrix: Fortran large-count (_c) bindings; C large-count twins are called where "
                 "this MPI has them")
    return "\n".join(lines)


def main():
    lang = os.environ.get("MPE_MATRIX_LANG") or (sys.argv[1] if len(sys.argv) > 1 else "c")
    cov = coverage()
    prog = mpitest.program("matrix_" + lang)
    t0 = time.time()
    plain = launch(prog)
    if plain.rc != 0 or "No Errors" not in plain.stdout:
        mpitest.fail("%s fails without tools (exit %s):\n%s\n%s\nreproduce: %s" % (
            prog, plain.rc, plain.stdout, plain.stderr[-3000:], plain.reproducer()))
    print("plain: %s (%.1f s)" % (plain.stdout.strip().split("\n")[-1], plain.seconds), flush=True)
    passed, failed = 1, []
    for tools in TOOL_SETS:
        failures, r = check_program(prog, [mpitest.lib(t) for t in tools], NP, plain)
        name = "+".join(tools)
        if failures:
            failed.append(name)
            print("FAIL %s under %s (%.1f s):\n  %s\n  reproduce: %s\n  kept: %s" % (
                os.path.basename(prog), name, r.seconds, "\n  ".join(failures), r.reproducer(), r.workdir), flush=True)
        else:
            passed += 1
            print("ok   %s under %s (%.1f s)" % (os.path.basename(prog), name, r.seconds), flush=True)
    shutil.rmtree(plain.workdir, ignore_errors=True)
    L = cov["languages"][lang]
    print(coverage_statement(cov, lang))
    print("matrix: %d routines x 1 language (%s) x %d tool sets on %s: %d of %d runs passed (%.0f s)" % (
        len(L["tested"]), L["name"], len(TOOL_SETS), cov["mpi"], passed, 1 + len(TOOL_SETS), time.time() - t0))
    if failed:
        mpitest.fail("matrix_%s failed under %s" % (lang, ", ".join(failed)))


if __name__ == "__main__":
    main()
