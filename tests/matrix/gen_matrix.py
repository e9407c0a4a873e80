"""Generates the conformance matrix's programs (C, mpif.h, use mpi, use mpi_f08) from core/mpi_calls.tsv.

Every table row of a covered class becomes one "case" of its language's program, emitted from the
one template of its class (and mode; a few classes pick a shape from the row's roles, or, where
the arguments differ routine by routine, the routine's own template). A new row of a class that
has a template (templates_c.py, templates_f.py) is tested without editing any file; a row without one is
reported as not covered.

In a template, `@MPI_X(` is a counted MPI call: the program counts every MPI call it makes (in C
the call becomes `(mx_n[k]++, MPI_X)(`; in Fortran `call @MPI_X(` gets a counting line before it),
and the class of MPI_X in the table adds it to the program's own count of collectives, one-sided
operations and Pcontrol markers. `$F` is the routine under test. `call msg(n)` / `MSG(n)` counts
point-to-point messages sent. At the end each rank writes matrix_counts.<rank>.txt (routine call
counts, messages, collectives, rma, markers), which matrix.py compares with the tools' output.

Outputs (--outdir): matrix_c.c, matrix_mpif.f90, matrix_usempi.f90, matrix_f08.f90, tested.txt
("<lang> <C name>" per tested routine) and coverage.json (covered and skipped routines, reasons).
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from templates_c import C_COLL, C_COLL_MODE, C_HEAD, C_T, C_TAIL  # noqa: E402
from templates_f import F_COLL, F_COLL_MODE, F_DECLS_F08, F_DECLS_OLD, F_HEAD, F_T, F_TAIL  # noqa: E402

NP = 4  # every program runs on 4 ranks: pairs (0,1) (2,3) and a periodic ring for neighbours

P2P = ["send", "recv", "sendrecv", "probe", "mprobe", "mrecv"]
COMPLETION = ["wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome",
              "request_get_status", "start", "cancel", "request_free"]
COLLECTIVE = ["barrier", "bcast", "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block", "scan",
              "exscan", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall",
              "alltoallv", "alltoallw", "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall",
              "neighbor_alltoallv", "neighbor_alltoallw"]
ONESIDED = ["rma", "win_sync", "win_create"]
COVERED = P2P + COMPLETION + COLLECTIVE + ONESIDED + ["pcontrol"]
PARTITIONED = "partitioned communication (MPI-4): in the accounting programs (gen_accounting.py)"
LEFT_OUT = {  # classes of the table the matrix does not target, and why
    "pready": PARTITIONED,
    "parrived": PARTITIONED,
    "file_read": "MPI-IO is left out", "file_write": "MPI-IO is left out",
    "file_open": "MPI-IO is left out", "file_close": "MPI-IO is left out",
    "comm_create": "communicator creation is left out (Dist_graph_create_adjacent is called as a helper)",
    "comm_free": "communicator release is left out (Comm_free is called as a helper)",
    "init": "called by every program, not a target", "finalize": "called by every program, not a target",
    "abort": "ends the program: left out",
}
LANGS = ["c", "mpif", "usempi", "f08"]
LANG_NAMES = {"c": "C", "mpif": "Fortran mpif.h", "usempi": "Fortran use mpi", "f08": "Fortran use mpi_f08"}


class Row:
    def __init__(self, fn, cls, mode, roles):
        # A class's variant (send:ready, rma:put) matters to the offline tools, not to which
        # template a row takes: the templates are per class, as the wrappers see it.
        self.cls, _, self.variant = cls.partition(":")
        self.fn, self.mode, self.roles = fn, mode, roles


def read_table(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()  # '#' starts a comment only at the start of a line ('|#N' is a position)
            if not line or line[0] in "#%":
                continue
            parts = line.split()
            roles = dict(p.split("=", 1) for p in parts[3:])
            rows.append(Row(parts[0], parts[1], parts[2], roles))
    return rows


def shape(row):
    """Which template of its class a row needs, from its roles (classes whose routines differ)."""
    r = row.roles
    if row.cls == "sendrecv":
        return "replace" if r.get("sendbuf") == r.get("recvbuf") else ""
    if row.cls == "start":
        return "all" if "nrequests" in r else ""
    if row.cls == "rma":
        if "op" in r and "recvbuf" in r:
            return "get_accumulate" if "recvcount" in r else "fetch_and_op"
        if "recvbuf" in r and "sendbuf" in r:
            return "compare_and_swap"
        if "op" in r:
            return "accumulate"
        return "get" if "recvbuf" in r else "put"
    return ""


def template(row, lang):
    """The case text for a row (its routine still as $F), or None when its class has no template."""
    base = row.fn
    if row.cls in COLLECTIVE:
        forms = (C_COLL if lang == "c" else F_COLL)[row.cls]
        mode = (C_COLL_MODE if lang == "c" else F_COLL_MODE)[row.mode]
        return "".join(mode.replace("$ARGS", args) + (post + "\n" if post else "") for args, post in forms)
    table = C_T if lang == "c" else F_T
    for key in (base, (row.cls, row.mode, shape(row)), (row.cls, row.mode)):
        if key in table:
            return table[key]
    return None


# ---------------------------------------------------------------------------------------------
# Emitting the programs.
# ---------------------------------------------------------------------------------------------
class Counter:
    """Numbers the MPI routines a program calls; the class decides the extra counters."""

    def __init__(self, classes):
        self.names, self.classes = [], classes

    def index(self, name):
        if name not in self.names:
            self.names.append(name)
        return self.names.index(name)

    def extra(self, name):
        cls = self.classes.get(name[:-2] if name.endswith("_c") else name)
        if cls in COLLECTIVE:
            return "coll"
        if cls == "rma":
            return "rma"
        if cls == "pcontrol":
            return "markers"
        return None


def emit_c_calls(text, counter):
    def repl(m):
        name = m.group(1)
        k = counter.index(name)
        extra = counter.extra(name)
        return "(mx_n[%d]++, %s%s)(" % (k, "mx_%s++, " % extra if extra else "", name)
    return re.sub(r"@(MPI_\w+)\(", repl, text)


F_CALL = re.compile(r"^(\s*)(if \((.*?)\) )?call @(MPI_\w+)\((.*)$")


def emit_f_calls(text, counter):
    out = []
    for line in text.split("\n"):
        m = F_CALL.match(line)
        if not m:
            if "@MPI_" in line:
                raise SystemExit("gen_matrix: a counted Fortran call must start its line: " + line)
            out.append(line)
            continue
        ind, cond, name, rest = m.group(1), m.group(3), m.group(4), m.group(5)
        k = counter.index(name) + 1
        extra = counter.extra(name)
        body = ["mx_n(%d) = mx_n(%d) + 1" % (k, k)]
        if extra:
            body.append("mx_%s = mx_%s + 1" % (extra, extra))
        body.append("call %s(%s" % (name, rest))
        if cond:
            out.append("%sif (%s) then" % (ind, cond))
            out += [ind + "  " + b for b in body]
            out.append(ind + "end if")
        else:
            out += [ind + b for b in body]
    return "\n".join(out)


def indent(text, n):
    return "".join((" " * n + l if l.strip() else l) + "\n" for l in text.rstrip("\n").split("\n"))


def fortran_names(names):
    # one DATA-free assignment per name: character arrays of fixed length, padded by the compiler
    return "\n".join("  mx_names(%d) = '%s'" % (i + 1, n) for i, n in enumerate(names))


def build_program(lang, cases, classes):
    """cases: [(routine, row, text)]. Returns the program's source."""
    counter = Counter(classes)
    body = []
    for i, (name, row, text) in enumerate(cases):
        code = text.replace("$F", name)
        if lang == "c":
            large = name.endswith("_c")
            # the large-count twins take MPI_Count counts and MPI_Aint displacements
            ct, dt = ("MPI_Count", "MPI_Aint") if large else ("int", "int")
            decl = ("%s cnts[4] = {2, 2, 2, 2};\n%s dsp[4] = {0, 2, 4, 6};\n%s wdsp[4] = {0, 8, 16, 24};\n"
                    "MPI_Aint adsp[4] = {0, 8, 16, 24};\n"
                    "MPI_Datatype tys[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};\n"
                    "(void)cnts; (void)dsp; (void)wdsp; (void)adsp; (void)tys;\n") % (ct, dt, dt)
            body.append("  /* case %d: %s (%s, %s) */\n  {\n    fill(%d);\n%s%s  }\n" % (
                i, name, row.cls, row.mode, i, indent(decl, 4), indent(emit_c_calls(code, counter), 4)))
        else:
            # one persistent request, also passed as an array of one to Startall / Waitall
            code = re.sub(r"\bpreq\b", "preqs(1)", code)
            if lang == "f08":
                code = re.sub(r"\$SOURCE\((\w+)\)", r"\1%MPI_SOURCE", code)
            else:
                code = re.sub(r"\$SOURCE\((\w+)\)", r"\1(MPI_SOURCE)", code)
            body.append("  ! case %d: %s (%s, %s)\n  call fill(%d)\n%s" % (
                i, name, row.cls, row.mode, i, indent(emit_f_calls(code, counter), 2)))
    if lang == "c":
        head = emit_c_calls(C_HEAD, counter)
        tail = emit_c_calls(C_TAIL, counter)
        src = head + "\n".join(body) + tail
        names = ", ".join('"%s"' % n for n in counter.names)
    else:
        head = emit_f_calls(F_HEAD, counter)
        tail = emit_f_calls(F_TAIL, counter)
        src = head + "\n".join(body) + tail
        names = fortran_names(counter.names)
        use = {"mpif": "", "usempi": "use mpi", "f08": "use mpi_f08\n  use, intrinsic :: iso_c_binding, only: c_ptr"}[lang]
        src = src.replace("@USE@", use).replace("@INCLUDE@", "include 'mpif.h'" if lang == "mpif" else "")
        decls = (F_DECLS_F08 if lang == "f08" else F_DECLS_OLD)
        decls += "  %s, parameter :: W = MPI_COMM_WORLD\n" % ("type(MPI_Comm)" if lang == "f08" else "integer")
        src = src.replace("@DECLS@", decls).replace("@LANGNAME@", LANG_NAMES[lang])
        # The parameter W must be declared before use: move it into the declarations (done above).
    src = src.replace("@NAMES@", names).replace("@NROUTINES@", str(len(counter.names)))
    src = src.replace("@NP@", str(NP)).replace("@NCASES@", str(len(cases))).replace("@LANG@", lang)
    return src, counter.names


def available(name, lang, wrapped, exported, f08, mpi):
    """(whether this MPI has routine `name` in language `lang`, and if not, why not)."""
    if lang == "c":
        return name in wrapped and "P" + name in exported, "not in %s (no P%s)" % (mpi, name)
    if lang in ("mpif", "usempi"):
        return name.lower() + "_" in wrapped, "not in %s's Fortran library (no p%s_)" % (mpi, name.lower())
    return name.lower() in f08, "not in %s's mpi_f08 library (no %s_f08_)" % (mpi, name.lower())


def f08_exported(libs):
    """The mpi_x_f08_ / mpi_x_f08ts_ entry points the MPI's mpi_f08 libraries export, as C names' lower case."""
    names = set()
    for lib in libs:
        if not lib or not os.path.exists(lib):
            continue
        out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
        for line in out.split("\n"):
            sym = line.rsplit(" ", 1)[-1]
            m = re.match(r"^mpi_(\w+?)_f08(ts)?_$", sym)
            if m:
                names.add("mpi_" + m.group(1))
    return names


def parse_args(doc):
    """The options gen_matrix.py and gen_accounting.py share: the table, what the MPI has, where to write."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--table", required=True)
    ap.add_argument("--wrapped", required=True, help="<build>/core/generated/wrapped.txt")
    ap.add_argument("--exported", required=True, help="<build>/core/generated/exported_symbols.txt")
    ap.add_argument("--f08-library", action="append", default=[], help="a library exporting mpi_x_f08_")
    ap.add_argument("--mpi", default="")
    ap.add_argument("--outdir", required=True)
    return ap.parse_args()


def main():
    a = parse_args(__doc__)
    rows = read_table(a.table)
    # With the variant, as before: a helper call of a variant routine adds to no counter here.
    classes = {r.fn: r.cls + (":" + r.variant if r.variant else "") for r in rows}
    wrapped = set(open(a.wrapped).read().split())
    exported = set(open(a.exported).read().split())
    f08 = f08_exported(a.f08_library)
    cases = {lang: [] for lang in LANGS}
    skipped = {lang: {} for lang in LANGS}  # routine -> reason
    for row in rows:
        if row.cls not in COVERED:
            continue
        if "partitions" in row.roles:
            for lang in LANGS:
                skipped[lang][row.fn] = PARTITIONED
            continue
        if row.variant:
            # The rows with a class variant (send:ready, rma:put...) were never run here (the
            # variant hid their class); their messages are in the accounting programs. Running
            # them here too waits for a measured run under the memory-checked build.
            for lang in LANGS:
                skipped[lang][row.fn] = "a class variant (%s:%s): not run by this matrix yet" % (row.cls, row.variant)
            continue
        for lang in LANGS:
            text = template(row, lang)
            variants = [row.fn] + ([row.fn + "_c"] if lang == "c" else [])
            for name in variants:
                have, why = available(name, lang, wrapped, exported, f08, a.mpi)
                if not have:
                    if name == row.fn:  # a missing large-count twin is no news (MPI-3.1 has none)
                        skipped[lang][name] = why
                    continue
                if text is None:
                    skipped[lang][name] = "no template for class %s mode %s" % (row.cls, row.mode)
                    continue
                cases[lang].append((name, row, text))
    os.makedirs(a.outdir, exist_ok=True)
    cov = {"mpi": a.mpi, "ranks": NP, "languages": {}}
    tested_lines = []
    for lang in LANGS:
        src, called = build_program(lang, cases[lang], classes)
        ext = "c" if lang == "c" else "f90"
        path = os.path.join(a.outdir, "matrix_%s.%s" % (lang, ext))
        # Rewrite only when changed, so an unchanged table does not rebuild the programs.
        old = open(path).read() if os.path.exists(path) else None
        if old != src:
            with open(path, "w") as f:
                f.write(src)
        targets = sorted({n for n in called if (n[:-2] if n.endswith("_c") else n) in classes and
                          classes[n[:-2] if n.endswith("_c") else n] in COVERED})
        for name in list(skipped[lang]):
            if name in targets:  # called by another routine's template after all
                del skipped[lang][name]
        tested_lines += ["%s %s" % (lang, n) for n in targets]
        cov["languages"][lang] = {"name": LANG_NAMES[lang], "program": "matrix_" + lang,
                                  "cases": [n for n, _, _ in cases[lang]], "tested": targets,
                                  "skipped": skipped[lang]}
    left = {}
    for row in rows:
        if row.cls in LEFT_OUT:
            left[row.fn] = LEFT_OUT[row.cls]
    cov["left_out"] = left
    with open(os.path.join(a.outdir, "tested.txt"), "w") as f:
        f.write("# Routines the conformance matrix calls, per language (c, mpif, usempi, f08); generated by "
                "tests/matrix/gen_matrix.py\n")
        f.write("\n".join(tested_lines) + "\n")
    with open(os.path.join(a.outdir, "coverage.json"), "w") as f:
        json.dump(cov, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
