"""Output that cannot be written: a full disk (cut short mid-file, or no room at all), a close
that reports a deferred error, a directory that refuses new files. Under each tool the program
ends as it would without the tool (same output, exit 0, no hang), each file that was lost costs
one `mpe-tools:` line that says what happened and what to check, and no partial file is left
under an output's name (nor a temporary one). A shim (failing_io.c) fails the writes under the
output directory only, since root ignores permissions."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest as m  # noqa: E402

# Every variable on MPICH; on Open MPI only the queue variables: binding its psm2 MTL's variables
# without psm2 hardware crashes inside Open MPI (PMPI_T_pvar_handle_alloc -> psm2_mq_get_stats).
PVARS = "umq" if m.MPI == "openmpi" else "all"

SHIM = os.path.join(m.BUILD, "lib", "libfailing_io.so")
HANG_SECONDS = 120
# (label, tool, settings, the outputs it writes in the output directory, the most lines a failure
# may cost, the failure modes). libmpetime: one line per rank for its own per-process file, one
# for the report. liblog: each rank whose own part of the parallel merge failed says so, so one
# line per rank at most. liblog's .mpelog is written by the merge with pwrite and checked there;
# its close is not part of the checked writer, so the "close" mode is for the checked writer's files.
NP = 4
CONFIGS = (
    ("time", "time", {}, ["ring.mpetime.txt", "ring.mpetime.json"] + ["ring.mpetime.%d.txt" % r for r in range(NP)],
     NP + 1, ("full", "partial", "close", "create")),
    ("time with MPE_TIME_PVARS", "time", {"MPE_TIME_PVARS": PVARS},
     ["ring.mpetime.pvars.txt", "ring.mpetime.pvars.json"], NP + 2, ("full", "partial", "close", "create")),
    ("log", "log", {}, ["ring.mpelog"], NP, ("full", "partial", "create")),
    ("log with OTF2 output", "log", {"MPE_LOG_FORMAT": "otf2"}, ["ring.otf2"], NP, ("full", "partial", "create")),
    # The logfile is written, the OTF2 archive beside it is refused: the logfile is kept whole.
    ("log with OTF2 output, archive refused", "log",
     {"MPE_LOG_FORMAT": "otf2", "MPE_TEST_FAIL_IO_MATCH": ".otf2"}, ["ring.otf2"], 1, ("create",)),
    # libumq: one line for each of its two report files (the text and the JSON), each naming it.
    ("umq", "umq", {"MPE_UMQ_THRESHOLD": "0"}, ["ring.umq.txt", "ring.umq.json"], 2,
     ("full", "partial", "close", "create")),
)
NEEDS_PVARS = {"time with MPE_TIME_PVARS", "umq"}  # the configurations with nothing to write without a variable
MODES = {  # the shim's settings for each failure mode
    "full": {"MPE_TEST_FAIL_IO": "full", "MPE_TEST_FAIL_IO_ROOM": "0"},
    "partial": {"MPE_TEST_FAIL_IO": "full", "MPE_TEST_FAIL_IO_ROOM": "40"},
    "close": {"MPE_TEST_FAIL_IO": "close"},
    "create": {"MPE_TEST_FAIL_IO": "create"},
}


def run(tool, env, preload_shim):
    libs = ([SHIM] if preload_shim else []) + [m.lib(tool)]
    flags = ["-x", "LD_PRELOAD=" + ":".join(libs)] if m.MPI == "openmpi" else ["-genv", "LD_PRELOAD", ":".join(libs)]
    for k, v in env.items():
        flags += ["-x", k + "=" + v] if m.MPI == "openmpi" else ["-genv", k, v]
    try:
        return m.run(NP, flags + [m.program("ring")], timeout=HANG_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        m.fail("%s %r: no end after %d s (a hang at finalize?)" % (tool, env, HANG_SECONDS))


plain = m.run(NP, [m.program("ring")])
checked = 0
for label, tool, settings, outputs, max_lines, modes in CONFIGS:
    # First a run that can write: the outputs this configuration makes on this MPI.
    good_dir = tempfile.mkdtemp(prefix="mpe-out-")
    good = run(tool, dict(settings, MPE_LOG_DIR=good_dir), False)
    m.expect(good.rc == 0, "%s: exit %d\n%s" % (label, good.rc, good.stderr))
    made = sorted(os.listdir(good_dir))
    usual = set(l for l in good.stderr.splitlines() if good_dir not in l)
    if not made:
        # Only a tool reading performance variables may write nothing: Debian's MPICH exports none.
        m.expect(label in NEEDS_PVARS, "%s: wrote nothing\n%s" % (label, good.stderr))
        print("not checked, %s: writes nothing on this MPI (%s)" % (label, good.stderr.strip().replace("\n", " | ")))
        m.cleanup(good)
        shutil.rmtree(good_dir, ignore_errors=True)
        continue
    m.expect(all(o in made for o in outputs), "%s: outputs %r, expected %r" % (label, made, outputs))
    m.cleanup(good)
    shutil.rmtree(good_dir, ignore_errors=True)
    for mode in modes:
        out_dir = tempfile.mkdtemp(prefix="mpe-out-")
        env = dict(settings, MPE_LOG_DIR=out_dir, MPE_TEST_FAIL_IO_DIR=out_dir, **MODES[mode])
        r = run(tool, env, True)
        what = "%s, %s" % (label, mode)
        m.expect(r.rc == 0, "%s: exit %d\nstderr:\n%s" % (what, r.rc, r.stderr))
        m.expect_eq(r.stdout, plain.stdout, what + ": program output")
        lines = [l for l in r.stderr.splitlines() if l.startswith("mpe-tools:")]
        other = [l for l in r.stderr.splitlines() if l and not l.startswith("mpe-tools:")]
        m.expect(not other, "%s: stray stderr lines %r" % (what, other))
        # The lines a run that can write prints too (settings, MPI_T) are not about the failure.
        lost = [l for l in lines if "wrote" not in l and "report in" not in l and l not in usual]
        m.expect(lost, "%s: no line says the output was lost: %r" % (what, lines))
        m.expect(len(lost) <= max_lines, "%s: more than %d lines: %r" % (what, max_lines, lost))
        for line in lost:
            m.expect(out_dir in line or "another rank" in line,
                     "%s: the line does not name what was lost: %r" % (what, line))
        left = sorted(os.listdir(out_dir))
        kept = ["ring.mpelog"] if "MPE_TEST_FAIL_IO_MATCH" in settings else []  # complete, and said so
        m.expect_eq(left, kept, what + ": files left in the output directory")
        if kept:
            m.expect(any("logfile is kept" in l for l in lost), "%s: the line does not say the logfile is kept: %r"
                     % (what, lost))
        shutil.rmtree(out_dir, ignore_errors=True)
        m.cleanup(r)
        checked += 1
m.cleanup(plain)
m.expect(checked > 0, "no configuration could be checked")
print("unwritable output: %d runs; each lost file is one line, no partial file, the program unharmed" % checked)
