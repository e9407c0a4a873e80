"""libmpetime per call site: the samples of tests/callsites (C through a PIE and a shared library,
Fortran, a call through two wrapper layers) give each SITE:<name> line its exact calls and bytes
in the JSON report and in `mpe report --callsites`; MPE_CALLSITE_DEPTH=3 names all three lines
of the deep call; each routine's figures are the sums of its sites, also when one return address
calls two routines (through a function pointer); Pcontrol(2) resets the sites."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "callsites"))
import callsites  # noqa: E402
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")


def expected(site, table, nprocs):
    """(routine, file, line, calls, bytes_sent, bytes_recv, ranks) of a site over the run."""
    source, routine, per_rank, per_call = table[site]
    _, line = callsites.line_of(site, source)
    ranks = len(callsites.ranks_making(site, nprocs))
    calls = per_rank * ranks
    if routine == "MPI_Send":
        sent, recv = calls * per_call, 0
    elif routine == "MPI_Recv":
        sent, recv = 0, calls * per_call
    else:  # MPI_Allreduce sends and receives its buffer; MPI_Barrier moves nothing
        sent = recv = calls * per_call
    return routine, source, line, calls, sent, recv, ranks


def report_sites(doc, routine, source, line):
    """The report's sites of `routine` whose innermost frame is source:line."""
    return [s for s in doc["callsites"]
            if s["routine"] == routine and s["file"] == source and s["line"] == line]


def table_rows(text):
    """`mpe report --callsites` text as rows: the numeric columns and the location."""
    rows = []
    for line in text.splitlines()[1:]:
        f = line.split(None, 11)
        rows.append({"routine": f[1], "calls": int(f[2]), "bytes": int(f[5]), "ranks": int(f[10]),
                     "location": f[11]})
    return rows


def check_run(program, nprocs, table, prefix):
    r = mpitest.run(nprocs, [mpitest.program(program)], tools=("time",), env={"MPE_LOGFILE_PREFIX": prefix})
    doc = r.json(prefix + ".mpetime.json")
    files = [os.path.join(r.workdir, "%s.mpetime.%d.txt" % (prefix, i)) for i in range(nprocs)]
    text = subprocess.run([MPE, "report", "--callsites"] + files, capture_output=True, text=True)
    mpitest.expect(text.returncode == 0, "mpe report --callsites failed: %s" % text.stderr)
    rows = table_rows(text.stdout)
    from_json = subprocess.run([MPE, "report", "--callsites", os.path.join(r.workdir, prefix + ".mpetime.json")],
                               capture_output=True, text=True)
    mpitest.expect(from_json.returncode == 0, "mpe report --callsites on the JSON report: %s" % from_json.stderr)
    json_rows = table_rows(from_json.stdout)
    mpitest.expect_eq([(x["routine"], x["calls"], x["bytes"], x["location"]) for x in json_rows],
                      [(x["routine"], x["calls"], x["bytes"], x["location"]) for x in rows],
                      "%s: the table from the JSON report" % program)

    for site in table:
        routine, source, line, calls, sent, recv, ranks = expected(site, table, nprocs)
        found = report_sites(doc, routine, source, line)
        mpitest.expect(len(found) == 1, "%s: site %s (%s at %s:%d) in the JSON report: %r" %
                       (program, site, routine, source, line, [(s["routine"], s["location"]) for s in doc["callsites"]]))
        s = found[0]
        got = (s["calls"], s["bytes_sent"], s["bytes_recv"], s["ranks"])
        mpitest.expect_eq(got, (calls, sent, recv, ranks), "%s: %s (calls, sent, received, ranks)" % (program, site))
        mpitest.expect(s["location"].startswith("%s:%d (" % (source, line)), "%s: %s location %r" %
                       (program, site, s["location"]))
        mpitest.expect_eq(len(s["frames"]), 1, "%s: %s frames at the default depth" % (program, site))
        row = [x for x in rows if x["routine"] == routine and x["location"].startswith("%s:%d (" % (source, line))]
        mpitest.expect(len(row) == 1, "%s: site %s in mpe report --callsites:\n%s" % (program, site, text.stdout))
        mpitest.expect_eq((row[0]["calls"], row[0]["bytes"], row[0]["ranks"]), (calls, sent + recv, ranks),
                          "%s: %s in mpe report --callsites (calls, bytes, ranks)" % (program, site))

    # Each routine's figures are the sums of its sites, on every rank.
    for p in doc["per_rank"]:
        for name, rt in p["routines"].items():
            if name == "MPI_Finalize":
                continue  # listed with one call: the report is written inside it
            mine = [c for c in p["callsites"] if c["routine"] == name]
            for field in ("calls", "bytes_sent", "bytes_recv"):
                mpitest.expect_eq(sum(c[field] for c in mine), rt[field],
                                  "%s rank %d %s %s summed over its sites" % (program, p["rank"], name, field))
            mpitest.expect_eq(min(c["min_ns"] for c in mine), rt["min_ns"], "%s %s min_ns" % (program, name))
            mpitest.expect_eq(max(c["max_ns"] for c in mine), rt["max_ns"], "%s %s max_ns" % (program, name))
    # The text report has the section, with the sites' locations.
    with open(os.path.join(r.workdir, prefix + ".mpetime.txt")) as f:
        report_text = f.read()
    mpitest.expect("Top call sites by aggregate time" in report_text, "text report lacks the call-site section")
    top = subprocess.run([MPE, "report", "--callsites", "--top", "2"] + files, capture_output=True, text=True)
    mpitest.expect_eq(len(table_rows(top.stdout)), 2, "%s: mpe report --callsites --top 2 rows" % program)
    return r, doc


# C: a PIE and a shared library on 4 ranks.
r, doc = check_run("callsites", 4, callsites.C_SITES, "cs")
_, line = callsites.line_of("lib_barrier", "csite.c")
barrier = report_sites(doc, "MPI_Barrier", "csite.c", line)[0]
frame = barrier["frames"][0]
mpitest.expect_eq((os.path.basename(frame["file"]), frame["line"], os.path.basename(frame["module"])),
                  ("csite.c", line, "libcsite.so"), "the barrier site's frame")
mpitest.expect_eq(frame["function"], "csite_barriers", "the barrier site's function")
mpitest.cleanup(r)

# Fortran on 2 ranks (always built: the project requires MPI's Fortran bindings).
mpitest.expect(os.path.exists(os.path.join(mpitest.BUILD, "bin", "callsites_f")), "callsites_f was not built")
r, doc = check_run("callsites_f", 2, callsites.F_SITES, "csf")
mpitest.cleanup(r)

# MPE_CALLSITE_DEPTH=3: the allreduce site is its three lines, innermost first.
r = mpitest.run(4, [mpitest.program("callsites")], tools=("time",),
                env={"MPE_LOGFILE_PREFIX": "deep", "MPE_CALLSITE_DEPTH": "3"})
doc = r.json("deep.mpetime.json")
routine, source, line, calls, sent, recv, ranks = expected("deep_allreduce", callsites.C_SITES, 4)
found = report_sites(doc, routine, source, line)
mpitest.expect(len(found) == 1, "depth 3: one allreduce site: %r" % [s["text"] for s in doc["callsites"]])
lines = [callsites.line_of(m, "callsites.c")[1] for m in ("deep_allreduce", "deep_layer_one", "deep_main")]
frames = found[0]["frames"]
mpitest.expect_eq([(os.path.basename(f["file"]), f["line"]) for f in frames], [("callsites.c", n) for n in lines],
                  "depth 3: the allreduce site's frames")
mpitest.expect_eq((found[0]["calls"], found[0]["bytes_sent"], found[0]["ranks"]), (calls, sent, ranks),
                  "depth 3: the allreduce site's calls, bytes, ranks")
mpitest.cleanup(r)

# One return address, two routines (a call through a function pointer): each routine has its own
# row at the site, so both the site table and the routine totals stay exact.
_, pointer_line = callsites.line_of("pointer", "pointer.c")
r = mpitest.run(2, [mpitest.program("callsite_pointer")], tools=("time",), env={"MPE_LOGFILE_PREFIX": "pointer"})
doc = r.json("pointer.mpetime.json")
at_line = sorted((s["routine"], s["calls"], s["ranks"]) for s in doc["callsites"]
                 if s["file"] == "pointer.c" and s["line"] == pointer_line)
mpitest.expect_eq(at_line, [("MPI_Comm_rank", 6, 2), ("MPI_Comm_size", 8, 2)],
                  "function pointer: (routine, calls, ranks) of its site")
for p in doc["per_rank"]:
    mpitest.expect_eq((p["routines"]["MPI_Comm_rank"]["calls"], p["routines"]["MPI_Comm_size"]["calls"]), (3, 4),
                      "function pointer: routine calls on rank %d" % p["rank"])
mpitest.cleanup(r)

# Pcontrol(2) resets the sites too: what precedes it is gone from every site.
r = mpitest.run(4, [mpitest.program("sleep_barrier"), "10", "reset"], tools=("time",),
                env={"MPE_LOGFILE_PREFIX": "reset"})
doc = r.json("reset.mpetime.json")
for p in doc["per_rank"]:
    mpitest.expect_eq(sorted((c["routine"], c["calls"]) for c in p["callsites"]),
                      [("MPI_Barrier", 1), ("MPI_Pcontrol", 1)], "reset rank %d sites" % p["rank"])
mpitest.cleanup(r)
print("time callsites: exact calls and bytes per call site, C, shared library, Fortran, depth 3, function "
      "pointer, reset")
