"""Runs the samples and the conformance matrix under the sanitized tool libraries (a build with
MPE_SANITIZE=ON: ASan + UBSan, poisoned mpe::Call) and fails on any memory error of ours.

    memcheck.py samples   the C and Fortran samples, 4 ranks, under all four tools and each alone (liblive
                          publishing to a relay: MPE_COMMAND's `mpe`, else this build's)
    memcheck.py matrix    the conformance matrix programs under all three tools (tests/matrix checks)
    memcheck.py planted   tests/memcheck/planted_tool.cpp's deliberate errors: each must be caught
(or MPE_MEMCHECK_SET=samples|matrix|planted, as ctest runs it; tests/memcheck/run does it all)

The programs are not instrumented (a user's are not): the ASan runtime (MPE_ASAN_RUNTIME) is
preloaded ahead of the tool libraries. Every process writes its ASan reports to files (log_path),
read after the run; UBSan's go to stderr, read too. A run passes when it exits 0, prints what the plain run prints, and:
  - no ASan error and no UBSan error at all (only our code is instrumented, and an error ends the run);
  - leaks of ours at exit total at most LEAK_BOUND bytes per process. A leak is ours when its
    allocation stack has a frame in a sanitized module of this build (lib/*.so, bin/mpe) other
    than a generated wrapper passing the call through, or when our module made the allocation
    itself. The MPI's own leaks (MPICH, Open MPI, hwloc, UCX: allocated under MPI_Init with only
    our pass-through wrapper on the stack) are counted and printed, not failed; so are leaks
    inside the MPI routines listed in mpi_leaks.txt, which leak when a tool calls them correctly.
Mallocs are unwound slowly (fast_unwind_on_malloc=0): the MPI libraries have no frame pointers,
and a fast unwind would lose our frames above them.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import mpitest  # noqa: E402

NP = 4
# Bytes leaked from our frames per process at exit. None is needed: what a tool keeps until exit
# stays reachable from its globals, which LeakSanitizer does not count.
LEAK_BOUND = 0
ASAN_RUNTIME = os.environ.get("MPE_ASAN_RUNTIME") or subprocess.run(
    ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
# The frame format names each frame's module, so that a report can be told ours or the MPI's.
FRAME_FORMAT = "    #%n %p in %f %S (%m+%o)"
FRAME_RE = re.compile(r"^\s+#(\d+) 0x[0-9a-f]+ in (.*) \((.*)\+0x[0-9a-f]+\)$")
# Modules that allocate or copy on their caller's behalf: the frame below them decides.
RUNTIME_MODULES = ("libasan.so", "libubsan.so", "libstdc++.so", "libc.so", "libgcc_s.so", "libm.so", "ld-linux")
# (module, function) frames of MPI routines that leak on a correct call of ours (mpi_leaks.txt).
with open(os.path.join(HERE, "mpi_leaks.txt")) as _f:
    MPI_LEAKS = [tuple(line.split("#")[0].split()) for line in _f if line.split("#")[0].strip()]
# Matched anywhere in a frame's source: built through ccache (scripts/test), whose base_dir makes
# the paths relative, a frame reads "core/generated/wrappers_c.cpp:6027", not "/.../core/...".
WRAPPER_SOURCES = ("core/generated/wrappers_c.cpp", "core/generated/wrappers_f.cpp", "core/generated/wrappers_solo.cpp",
                   "core/generated/wrapper_bodies.h")
# The samples, their arguments and what to mask in their output (timings).
SAMPLES = [("ring", []), ("pingpong", ["8", "200"]), ("halo2d", []), ("flood", []), ("pcontrol", []),
           ("threads", []), ("fortran_ring", []), ("fortran_halo", []), ("fortran_halo_f08", [])]
MASKS = [(re.compile(r"half_round_trip_us=[0-9.]+"), "half_round_trip_us=*")]
TOOL_SETS = [("time", "umq", "log", "live"), ("time",), ("umq",), ("log",), ("live",)]


def sanitized_modules():
    build = os.path.realpath(mpitest.BUILD)
    return [os.path.join(build, "lib") + os.sep, os.path.join(build, "bin", "mpe")]


def is_ours(module):
    module = os.path.realpath(module) if module.startswith("/") else module
    return any(module.startswith(m) for m in sanitized_modules())


def sanitizer_env(logdir):
    """ASAN_OPTIONS and UBSAN_OPTIONS for one run whose reports go to logdir."""
    asan = {
        "log_path": os.path.join(logdir, "asan"),
        "detect_leaks": "1",
        "fast_unwind_on_malloc": "0",
        # An error aborts (SIGABRT fails the run); leaks leave the exit code alone (exitcode=0),
        # since the MPI's own leaks must not fail it: the reports are read and judged here.
        "abort_on_error": "1",
        "exitcode": "0",
        # UCX and Open MPI install SIGSEGV handlers of their own; ASan's must stay, to report.
        "allow_user_segv_handler": "0",
        "stack_trace_format": '"%s"' % FRAME_FORMAT,
    }
    ubsan = {"print_stacktrace": "1", "halt_on_error": "1", "abort_on_error": "1",
             "stack_trace_format": '"%s"' % FRAME_FORMAT}
    return {"ASAN_OPTIONS": ":".join("%s=%s" % kv for kv in asan.items()),
            "UBSAN_OPTIONS": ":".join("%s=%s" % kv for kv in ubsan.items()),
            "UCX_HANDLE_ERRORS": "none"}


def stack_is_ours(frames):
    """frames: [(function and source, module)], innermost first. See the module comment. A frame
    counts only when symbolized: a library unloaded before exit (Open MPI dlcloses its components)
    leaves addresses that the report attributes to whatever is mapped there now, unsymbolized."""
    frames = [(f, m) for f, m in frames if not f.startswith("<null>")]
    if any(mod in m and f.split()[0] == fn for f, m in frames for mod, fn in MPI_LEAKS):
        return False
    outside = [(f, m) for f, m in frames if not any(r in m for r in RUNTIME_MODULES)]
    if outside and is_ours(outside[0][1]):
        return True  # our code allocated (or touched the memory) itself
    return any(is_ours(m) and not any(w in f for w in WRAPPER_SOURCES) for f, m in outside)


class Reports:
    """What a run's report files say: errors (any is a failure) and leaks, ours and the MPI's."""

    def __init__(self, logdir, stderr):
        self.errors, self.our_leaks, self.mpi_leak_bytes = [], [], 0
        self.our_leak_bytes = {}  # per process (report file)
        for path in sorted(glob.glob(os.path.join(logdir, "*"))):
            with open(path, errors="replace") as f:
                self._parse(path, f.read())
        # GCC's UBSan runtime writes to stderr whatever log_path says. Only our code is
        # instrumented, so every UBSan report is ours.
        at = [i for i in (stderr.find("runtime error:"), stderr.find("ERROR: AddressSanitizer")) if i >= 0]
        if at:  # from the first report on: the MPI's abort handler may print pages after it
            start = stderr.rfind("\n", 0, min(at)) + 1
            self.errors.append("stderr:\n" + stderr[start:start + 6000].strip())

    def _parse(self, path, text):
        if "ERROR: LeakSanitizer" not in text and ("ERROR: " in text or "runtime error:" in text):
            self.errors.append("%s:\n%s" % (os.path.basename(path), text.strip()[-6000:]))
            return
        # Leak blocks: a "Direct/Indirect leak of N byte(s)" line, then its frames.
        for block in re.split(r"\n(?=(?:Direct|Indirect) leak of )", text)[1:]:
            m = re.match(r"(?:Direct|Indirect) leak of (\d+) byte", block)
            frames = [(fm.group(2), fm.group(3)) for fm in map(FRAME_RE.match, block.splitlines()) if fm]
            if stack_is_ours(frames):
                self.our_leaks.append(block.strip())
                self.our_leak_bytes[path] = self.our_leak_bytes.get(path, 0) + int(m.group(1))
            else:
                self.mpi_leak_bytes += int(m.group(1))

    def failures(self):
        out = ["sanitizer error:\n" + e for e in self.errors]
        over = {p: n for p, n in self.our_leak_bytes.items() if n > LEAK_BOUND}
        if over:
            out.append("leaks of ours above the bound of %d bytes per process (%s):\n%s" % (
                LEAK_BOUND, ", ".join("%s %d bytes" % (os.path.basename(p), n) for p, n in sorted(over.items())),
                "\n\n".join(self.our_leaks[:10])))
        return out


def preload(tools):
    return [ASAN_RUNTIME] + [t if t.startswith("/") else mpitest.lib(t) for t in tools]


def masked(text):
    for pattern, repl in MASKS:
        text = pattern.sub(repl, text)
    return text


def run_checked(argv, tools, plain_stdout, what, extra_env=None, planted=False):
    """Runs argv on NP ranks under the sanitized tools; returns (failures, Reports). A planted run
    is expected to fail: its files are removed either way."""
    logdir = tempfile.mkdtemp(prefix="mpememcheck-")
    env = {"MPE_QUIET": "1"}
    env.update(sanitizer_env(logdir))
    env.update(extra_env or {})
    t0 = time.time()
    r = mpitest.run(NP, argv, env=env, check=False, launch=preload_args(preload(tools)))
    reports = Reports(logdir, r.stderr)
    failures = reports.failures()
    if r.rc != 0:
        failures.append("exit %d\nstderr (last lines):\n%s" % (r.rc, "\n".join(r.stderr.splitlines()[-20:])))
    elif masked(r.stdout) != masked(plain_stdout):
        failures.append("output differs from the plain run:\n--- plain\n%s--- tools\n%s" % (plain_stdout, r.stdout))
    verdict = ("caught" if planted else "FAIL") if failures else "ok"
    print("%-6s %-40s %5.1f s  (MPI's own leaks: %d bytes)" % (
        verdict, what, time.time() - t0, reports.mpi_leak_bytes), flush=True)
    if not failures or planted:
        mpitest.cleanup(r)
        shutil.rmtree(logdir, ignore_errors=True)
    else:
        print("  kept: %s (reports in %s)" % (r.workdir, logdir))
    return failures, reports


def preload_args(libs):
    """mpiexec options that preload libs in every rank (and only there: not in mpiexec)."""
    p = ":".join(libs)
    return ["-x", "LD_PRELOAD=" + p] if mpitest.MPI == "openmpi" else ["-genv", "LD_PRELOAD", p]


def start_relay():
    """A live relay for liblive's runs, and the ranks' environment: the publisher thread, ZeroMQ and
    the frames are checked too, not only the recording. The relay is not what is checked (it is the
    `mpe` command, not a tool library), so any build's serves: tests/memcheck/run passes the main
    build's (MPE_COMMAND), which spares the sanitized build the command and its libraries."""
    work = tempfile.mkdtemp(prefix="mpememcheck-relay-")
    live, envfile = os.path.join(work, "run.live"), os.path.join(work, "run.env")
    relay = subprocess.Popen([mpitest.MPE_COMMAND, "live", "relay", "--live-file", live,
                              "--env-file", envfile], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(envfile) and os.path.getsize(envfile) > 0:
            break
        time.sleep(0.05)
    env = {}
    for line in open(envfile):
        k, v = line.strip()[len("export "):].split("=", 1)
        env[k] = v.strip("'")
    return relay, env


def run_samples():
    failed = []
    relay, live_env = start_relay()
    try:
        return run_samples_with(failed, live_env)
    finally:
        relay.terminate()
        relay.wait(timeout=30)


def run_samples_with(failed, live_env):
    for name, args in SAMPLES:
        try:
            argv = [mpitest.program(name)] + args
        except FileNotFoundError:
            failed.append("%s: not built" % name)
            continue
        plain = mpitest.run(NP, argv, env={"MPE_QUIET": "1"}, check=False)
        if plain.rc != 0:
            failed.append("%s fails without tools (exit %d): %s" % (name, plain.rc, plain.stderr[-2000:]))
            continue
        for tools in TOOL_SETS:
            what = "%s under %s" % (name, "+".join(tools))
            failures, _ = run_checked(argv, tools, plain.stdout, what, extra_env=live_env if "live" in tools else None)
            failed += ["%s: %s" % (what, f) for f in failures]
        mpitest.cleanup(plain)
    return failed


def run_matrix():
    """The matrix programs under all three tools, with tests/matrix's own checks (exit, output,
    libmpetime's counts, liblog's log) besides the sanitizer's."""
    sys.path.insert(0, os.path.join(HERE, "..", "matrix"))
    import matrix  # noqa: E402

    failed = []
    tools = preload(("time", "umq", "log"))
    for prog in matrix.programs():
        plain = matrix.launch(prog)
        logdir = tempfile.mkdtemp(prefix="mpememcheck-")
        saved = dict(os.environ)
        os.environ.update(sanitizer_env(logdir))  # matrix.launch passes its own environment on
        try:
            t0 = time.time()
            failures, r = matrix.check_program(prog, tools, NP, plain)
        finally:
            os.environ.clear()
            os.environ.update(saved)
        reports = Reports(logdir, r.stderr)
        failures = reports.failures() + failures
        what = "%s under time+umq+log" % os.path.basename(prog)
        print("%-6s %-40s %5.1f s  (MPI's own leaks: %d bytes)" % (
            "FAIL" if failures else "ok", what, time.time() - t0, reports.mpi_leak_bytes), flush=True)
        if failures:
            print("  kept: %s (reports in %s)\n  reproduce: %s" % (r.workdir, logdir, r.reproducer()))
        else:
            shutil.rmtree(logdir, ignore_errors=True)
        shutil.rmtree(plain.workdir, ignore_errors=True)
        failed += ["%s: %s" % (what, f) for f in failures]
    return failed


PLANTED = {  # mode: what the report must say
    "unset_field": "a5a5a5a5a5a5a5a5",  # UBSan: a misaligned load from the poison pattern
    "uninit_heap": "not a valid value for type 'bool'",
    "heap_overflow": "heap-buffer-overflow",
    "leak": "leaks of ours above the bound",
}


def run_planted():
    """Each planted error must fail the run with a report that names planted_tool.cpp."""
    failed = []
    argv = [mpitest.program("ring")]
    plain = mpitest.run(NP, argv, env={"MPE_QUIET": "1"})
    planted = os.path.join(mpitest.BUILD, "lib", "libmemcheck_planted.so")
    for mode, says in PLANTED.items():
        failures, _ = run_checked(argv, (planted, "log"), plain.stdout, "ring, planted %s" % mode,
                                  {"MPE_PLANTED": mode}, planted=True)
        text = "\n".join(failures)
        if not failures:
            failed.append("planted %s: the run passed; the check cannot fail" % mode)
        elif says not in text or "planted_tool.cpp" not in text:
            failed.append("planted %s: failed, but without a report saying %r at planted_tool.cpp:\n%s"
                          % (mode, says, text[-4000:]))
        else:
            print("       %s" % next(line.strip() for line in text.splitlines() if "planted_tool.cpp" in line))
    return failed


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MPE_MEMCHECK_SET", "samples")
    mpitest.expect(os.path.exists(ASAN_RUNTIME), "no ASan runtime at %r (gcc's libasan.so)" % ASAN_RUNTIME)
    t0 = time.time()
    failed = {"samples": run_samples, "matrix": run_matrix, "planted": run_planted}[what]()
    verdict = "FAILED" if failed else ("every planted error caught" if what == "planted" else "no error of ours")
    print("memcheck %s on %s: %s in %.0f s" % (what, mpitest.MPI, verdict, time.time() - t0))
    if failed:
        mpitest.fail("\n\n".join(failed))


if __name__ == "__main__":
    main()
