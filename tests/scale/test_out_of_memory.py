"""Out of memory is an answer, not a crash (issue 37): every `mpe` command that reads a log, run
under an address-space limit (RLIMIT_AS) from one it cannot start its work in up to one it can
finish in, either finishes (exit 0) or prints exactly one line, "mpe: out of memory: `<command>`
reading <log> ... after using <n> GiB; run it where more memory is free ...", and exits 1: never
std::bad_alloc, SIGABRT, a crash, or an out-of-memory failure reported as a damaged log. Each
command must meet the limit at least once (the test would otherwise not test it)."""
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

MPE = mpitest.MPE_COMMAND
LIMITS_MIB = [15, 17, 20, 25, 30, 40, 60, 100, 160, 400]  # below 15 the loader cannot map the libraries
LINE = re.compile(r"^mpe: out of memory: `mpe (?P<cmd>[^`]*)` reading (?P<log>\S+) \([0-9.]+ GB on disk\) could "
                  r"not get more memory after using [0-9.]+ GiB; run it where more memory is free, or raise "
                  r"the limit \(ulimit -v\)")

work = tempfile.mkdtemp(prefix="mpe-oom-")
log = os.path.join(work, "run.mpelog")
mpitest.mpe("synth", "--ranks", "64", "--events", "3000000", log)
archive = os.path.join(work, "run-otf2")
mpitest.mpe("convert", "--to", "otf2", log, archive)

COMMANDS = [
    ["stat", log],
    ["stat", "--json", log],
    ["print", log],
    ["waits", log],
    ["umq", log],
    ["diff", log, log],
    ["convert", "--to", "otf2", log, os.path.join(work, "out-otf2")],
    ["convert", "--to", "chrome", log, os.path.join(work, "out.json")],
    ["convert", "--to", "mpelog", os.path.join(archive, "traces.otf2"), os.path.join(work, "back.mpelog")],
]


def run_limited(args, mib):
    limit = mib * 1024 * 1024

    def restrict():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([MPE] + args, preexec_fn=restrict, capture_output=True, text=True, timeout=300)


failures = []
for args in COMMANDS:
    said = []
    for mib in LIMITS_MIB:
        p = run_limited(args, mib)
        what = "mpe %s under %d MiB" % (" ".join(args), mib)
        if p.returncode == 0:
            continue
        if p.returncode == 127 and "error while loading shared libraries" in p.stderr:
            continue  # too little even to load the libraries: before mpe runs
        lines = p.stderr.strip().splitlines()
        m = LINE.match(lines[0]) if len(lines) == 1 else None
        if p.returncode != 1 or not m or m.group("cmd") != " ".join(args):
            failures.append("%s exited %d, not with the one line:\n%s" % (what, p.returncode, p.stderr[-1500:]))
            break
        said.append(mib)
    print("mpe %-60s out of memory under %s MiB" % (" ".join(a if a not in (log,) else "LOG" for a in args)[:60],
                                                    ", ".join(map(str, said)) or "no limit tried"))
    if not said and not failures:
        failures.append("mpe %s never ran out of memory under %s MiB: the test does not test it"
                        % (" ".join(args), LIMITS_MIB))

# upshot: the same answer, as "upshot: cannot open LOG: out of memory: upshot holds all N records
# of this log ..." (the window shows it in a dialog, from the same status); Qt's own notices aside.
UPSHOT = os.path.join(mpitest.BUILD, "bin", "upshot")
UPSHOT_LINE = re.compile(r"^upshot: cannot open \S+: out of memory: upshot holds all [0-9]+ records of this log and "
                         r"could not get the memory: open it where more memory is free")
if os.path.exists(UPSHOT):
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("XDG_RUNTIME_DIR", work)
    for extra in ([], ["--waits", "--umq"]):
        said = []
        for mib in [100, 200, 400]:
            limit = mib * 1024 * 1024
            p = subprocess.run([UPSHOT, "--export", os.path.join(work, "x.png")] + extra + [log],
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)),
                               capture_output=True, text=True, timeout=300)
            lines = [x for x in p.stderr.strip().splitlines() if not x.startswith("QStandardPaths")]
            if p.returncode == 0 or (p.returncode == 127 and "error while loading shared libraries" in p.stderr):
                continue
            if p.returncode != 1 or len(lines) != 1 or not UPSHOT_LINE.match(lines[0]):
                failures.append("upshot %s under %d MiB exited %d, not with the one line:\n%s"
                                % (" ".join(extra), mib, p.returncode, p.stderr[-1500:]))
                break
            said.append(mib)
        print("upshot --export %-47s out of memory under %s MiB" % (" ".join(extra), ", ".join(map(str, said))))
        if not said:
            failures.append("upshot %s never ran out of memory: the test does not test it" % " ".join(extra))

shutil.rmtree(work, ignore_errors=True)
if failures:
    mpitest.fail("\n".join(failures))
print("PASS: every command out of memory says so in one line")
