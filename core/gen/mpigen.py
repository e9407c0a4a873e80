#!/usr/bin/env python3
"""Generates the interposition layer from the selected MPI's own preprocessed mpi.h.

Inputs: the preprocessed header (`mpicc -E -P`), the per-function table (core/mpi_calls.tsv) and
optionally the Fortran entry points the MPI library exports (`pmpi_*_` names from `nm -D`).
Outputs (into the build tree, never committed):
  calls.h        - enum Fn, CallClass, Mode, role bits, struct Call, per-function descriptors
  wrappers_c.cpp - one MPI_X per PMPI_X prototype: fill a Call, run the hooks, call PMPI_X
  wrappers_f.cpp - one mpi_x_ per exported pmpi_x_ with a C counterpart
  wrapped.txt    - the wrapped names, for `mpe coverage`
  stack_c.cpp    - libmpestack: MPI_X and PMPI_X dispatched through a stack of PMPI tools
  stack_f.cpp    - libmpestack: the MPI's Fortran entry points, placed above every layer

The wrappers are thin: they call PMPI and return its code unchanged; all meaning lives in the
hand-written tools, reached through mpe::Call.
"""
import argparse
import re
import sys
from dataclasses import dataclass, field

ROLE_KIND_CTYPE = {
    # role kind -> (C++ field type, how a C argument converts to it)
    "buf": "const void*",
    "count": "int64_t",
    "counts": "const void*",
    "type": "MPI_Datatype",
    "types": "const MPI_Datatype*",
    "int": "int",
    "comm": "MPI_Comm",
    "comm_out": "MPI_Comm*",
    "op": "MPI_Op",
    "requests": "MPI_Request*",
    "index_out": "int*",
    "indices_out": "int*",
    "int_out": "int*",
    "status": "MPI_Status*",
    "statuses": "MPI_Status*",
    "message": "MPI_Message*",
    "win": "MPI_Win",
    "win_out": "MPI_Win*",
    "file": "MPI_File",
}
MODES = {"b": "kBlocking", "nb": "kNonblocking", "pi": "kPersistentInit"}
# The suite's wrappers as a layer of libmpestack: mpe_stacked_MPI_X(caller, MPI_X's arguments...).
# The stack runs it at the MPI library's level, so that the tools' own calls (their finalize
# reductions) reach no other layer, and passes the layer below ours as mpe_next_.
STACKED_PREFIX = "mpe_stacked_"


def class_enumerator(cls):
    """The CallClass enumerator of a class name in the table: send_init -> kSendInit."""
    return "k" + "".join(part.capitalize() for part in cls.split("_"))


@dataclass
class Param:
    text: str        # declaration text with the name in place
    name: str
    ctype: str       # declaration with the name removed, for classification
    is_array: bool


@dataclass
class Proto:
    ret: str
    name: str        # MPI_X (without the P)
    params: list
    variadic: bool = False


@dataclass
class Row:
    name: str
    cls: str
    mode: str
    roles: dict = field(default_factory=dict)  # role -> list of alternatives
    variant: str = ""  # after the class's colon (send:synchronous): for the offline tools only


@dataclass
class ClassMeaning:
    family: str
    shape: str = ""  # collectives: barrier, one_to_all, all_to_one, all_to_all, other


def fail(msg):
    sys.stderr.write("mpigen: error: " + msg + "\n")
    sys.exit(1)


def strip_attributes(text):
    out, i = [], 0
    while True:
        j = text.find("__attribute__", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.index("(", j)
        depth = 0
        while True:
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def split_top(params):
    parts, depth, cur = [], 0, []
    for ch in params:
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


TYPE_WORDS = {"int", "char", "void", "double", "float", "long", "short", "unsigned", "signed",
              "const", "volatile", "struct", "size_t", "restrict", "__restrict"}


def parse_param(text, index):
    text = re.sub(r"\s+", " ", text).strip()
    if text == "...":
        return None
    fp = re.match(r"^(.*\(\s*\*\s*)(\w*)(\s*\).*)$", text)
    if fp:  # function pointer
        name = fp.group(2) or "arg%d" % index
        return Param(fp.group(1) + name + fp.group(3), name, fp.group(1) + fp.group(3), False)
    arr = ""
    m = re.match(r"^(.*?)((?:\s*\[[^\]]*\])+)$", text)
    if m:
        text, arr = m.group(1).strip(), m.group(2).replace(" ", "")
    m = re.match(r"^(.*?)(\w+)$", text)
    base, last = (m.group(1), m.group(2)) if m else (text, "")
    if not last or last in TYPE_WORDS or last.startswith("MPI") or not base.strip():
        name = "arg%d" % index
        decl = text + " " + name + arr
        ctype = text
    else:
        name = last
        decl = text + arr
        ctype = base.strip()
    return Param(decl, name, ctype + (" *" if arr else ""), bool(arr))


def parse_header(path):
    text = strip_attributes(open(path).read())
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    text = re.sub(r"\s+", " ", text)
    protos, named = {}, {}
    for stmt in text.split(";"):
        m = re.match(r"^\s*(?:extern\s+)?([\w\s\*]+?)\s*\b(P?MPI_\w+)\s*\((.*)\)\s*$", stmt)
        if not m or "typedef" in stmt:
            continue
        ret, fname, plist = m.group(1).strip(), m.group(2), m.group(3)
        ret = re.sub(r"\b(extern|static|inline)\b", "", ret).strip()
        raw = [] if plist.strip() in ("", "void") else split_top(plist)
        params, variadic = [], False
        for i, p in enumerate(raw):
            parsed = parse_param(p, i)
            if parsed is None:
                variadic = True
            else:
                params.append(parsed)
        proto = Proto(ret, fname[1:] if fname.startswith("PMPI_") else fname, params, variadic)
        (protos if fname.startswith("PMPI_") else named)[proto.name] = proto
    # Prefer the argument names of the MPI_X declaration where PMPI_X leaves them out.
    for name, proto in protos.items():
        other = named.get(name)
        if other and len(other.params) == len(proto.params):
            for i, p in enumerate(proto.params):
                if p.name.startswith("arg") and not other.params[i].name.startswith("arg"):
                    proto.params[i] = other.params[i]
    return protos


def parse_table(path, classes=None):
    """The %role declarations and the rows; the %class declarations go to `classes` when given."""
    roles, rows = {}, {}
    for lineno, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0] if not re.search(r"=\S*#\d", line) else line
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[0] == "%role":
            if words[2] not in ROLE_KIND_CTYPE:
                fail("%s:%d: unknown role kind %s" % (path, lineno, words[2]))
            roles[words[1]] = words[2]
            continue
        if words[0] == "%class":
            if len(words) not in (3, 4):
                fail("%s:%d: expected '%%class class family [shape]'" % (path, lineno))
            if classes is not None:
                classes[words[1]] = ClassMeaning(*words[2:])
            continue
        if len(words) < 3 or words[2] not in MODES:
            fail("%s:%d: expected 'function class mode roles...'" % (path, lineno))
        cls, _, variant = words[1].partition(":")
        row = Row(words[0], cls, words[2], variant=variant)
        for w in words[3:]:
            role, _, alts = w.partition("=")
            if role not in roles:
                fail("%s:%d: unknown role %s" % (path, lineno, role))
            row.roles[role] = alts.split("|")
        if row.name in rows:
            fail("%s:%d: %s listed twice" % (path, lineno, row.name))
        rows[row.name] = row
    return roles, rows


def resolve_roles(proto, row):
    """Maps each role of the row to the index of the argument that plays it."""
    out = {}
    for role, alts in row.roles.items():
        idx = None
        for alt in alts:
            if alt.startswith("#"):
                if int(alt[1:]) < len(proto.params):
                    idx = int(alt[1:])
            else:
                idx = next((i for i, p in enumerate(proto.params) if p.name == alt), None)
            if idx is not None:
                break
        if idx is None:
            fail("%s: role %s names %s, but mpi.h declares (%s)" % (
                proto.name, role, "|".join(alts), ", ".join(p.name for p in proto.params)))
        out[role] = idx
    return out


def role_bits(rmap):
    return " | ".join("role::%s" % r for r in rmap) or "0"


def emit_header(out, roles, protos, rows, classes):
    names = sorted(protos)
    w = out.write
    w("// Generated by core/gen/mpigen.py from this MPI's mpi.h and core/mpi_calls.tsv. Do not edit.\n")
    w("#pragma once\n#include <mpi.h>\n#include <cstdint>\n\nnamespace mpe {\n\n")
    w("// Every wrapped MPI function, in name order.\nenum class Fn : uint16_t {\n")
    for n in names:
        w("  %s,\n" % n)
    w("};\ninline constexpr int kFnCount = %d;\n\n" % len(names))
    w("// What a call does; several functions share a class (MPI_Send, MPI_Isend, MPI_Send_init...).\n")
    w("enum class CallClass : uint8_t {\n  kOther,\n")
    for c in classes:
        w("  %s,\n" % class_enumerator(c))
    w("};\ninline constexpr int kCallClassCount = %d;\n\n" % (len(classes) + 1))
    w("enum class Mode : uint8_t { kBlocking, kNonblocking, kPersistentInit };\n\n")
    w("// One bit per role: which fields of Call are valid for a call.\nnamespace role {\n")
    for i, r in enumerate(roles):
        w("inline constexpr uint64_t %s = uint64_t{1} << %d;\n" % (r, i))
    w("}  // namespace role\n\n")
    w("// Call flags.\ninline constexpr uint8_t kLargeCount = 1;  // counts are MPI_Count, arrays MPI_Count[]\n")
    w("inline constexpr uint8_t kFortran = 2;     // entered through a Fortran binding\n\n")
    w("// One MPI call as the tools see it. Only the fields whose role bit is set are valid; the\n")
    w("// wrapper writes nothing else, which keeps the per-call cost to a few stores.\n")
    w("struct Call {\n  Fn fn;\n  CallClass cls;\n  Mode mode;\n  uint8_t flags;\n")
    w("  uint8_t depth;        // 0 for an application call, >0 for a call made inside another\n")
    w("  int rc;               // return code, valid in leave hooks\n")
    w("  uint64_t roles;       // role bits\n")
    w("  uint64_t t_enter;     // clock ticks around the PMPI call, when a tool asked for time\n")
    w("  uint64_t t_leave;\n")
    w("  uintptr_t caller;     // return address into the code that called MPI: the call site\n")
    for r, kind in roles.items():
        w("  %s %s;\n" % (ROLE_KIND_CTYPE[kind], r))
    w("  bool has(uint64_t bits) const { return (roles & bits) == bits; }\n")
    w("  int nreq() const { return has(role::nrequests) ? nrequests : 1; }\n")
    w("  // Reads element i of a count array, whatever its width.\n")
    w("  int64_t count_at(const void* counts, int i) const {\n")
    w("    return (flags & kLargeCount) ? static_cast<const MPI_Count*>(counts)[i]\n")
    w("                                 : static_cast<const int*>(counts)[i];\n  }\n};\n\n")
    w("struct FnInfo {\n  const char* name;\n  CallClass cls;\n  Mode mode;\n  uint64_t roles;\n};\n")
    w("// Indexed by Fn.\nextern const FnInfo kFnInfo[kFnCount];\n")
    w("inline const FnInfo& info(Fn fn) { return kFnInfo[static_cast<int>(fn)]; }\n")
    w("extern const char* const kCallClassName[kCallClassCount];\n\n}  // namespace mpe\n")


def base_row(name, rows):
    if name in rows:
        return rows[name], False
    if name.endswith("_c") and name[:-2] in rows:
        return rows[name[:-2]], True
    return None, name.endswith("_c")


def arg_list(proto):
    return ", ".join(p.name for p in proto.params)


def forwarded_arg_list(proto, rmap, roles):
    """The PMPI_X arguments, read back from `call` where a role field holds them.

    Why: the hooks are opaque calls, so every argument still live after them must sit in a
    callee-saved register or be spilled; reading the call's fields instead (which the hooks may
    read but must not change) saves those saves and restores on the hot path."""
    by_index = {idx: role for role, idx in rmap.items()}
    args = []
    for i, p in enumerate(proto.params):
        role = by_index.get(i)
        if role is None or (ROLE_KIND_CTYPE[roles[role]].endswith("*") and "*" not in p.ctype):
            args.append(p.name)  # no field, or the field holds the argument's address
        else:
            kind = "decltype(%s)" % p.name
            if "*" not in p.ctype and not p.is_array and "const" in p.ctype.split():
                kind = "std::remove_cv_t<%s>" % kind  # `const int level`: cast to plain int
            args.append("(%s)(call.%s)" % (kind, role))
    return ", ".join(args)


def emit_role_assignments(proto, rmap, roles):
    """C++ statements that copy the role arguments into `call`."""
    lines = []
    for role, idx in rmap.items():
        p = proto.params[idx]
        kind = roles[role]
        val = p.name
        if kind in ("buf", "counts"):
            val = "static_cast<const void*>(%s)" % p.name
        elif kind == "count":
            val = "static_cast<int64_t>(%s)" % p.name
        elif ROLE_KIND_CTYPE[kind].endswith("*") and "*" not in p.ctype:
            val = "&" + p.name  # a handle passed by value, e.g. MPI_Request_get_status
        lines.append("  call.%s = %s;" % (role, val))
    return lines


def status_substitution(proto, rmap, roles):
    """Statements that replace MPI_STATUS(ES)_IGNORE by the core's own storage when asked to."""
    lines = []
    if "status" in rmap:
        name = proto.params[rmap["status"]].name
        lines.append("  MPI_Status status_storage_;")
        lines.append("  if (core::wants_status() && %s == MPI_STATUS_IGNORE) %s = &status_storage_;" % (name, name))
    if "statuses" in rmap:
        name = proto.params[rmap["statuses"]].name
        n = proto.params[rmap["nrequests"]].name if "nrequests" in rmap else "1"
        lines.append("  if (core::wants_status() && %s == MPI_STATUSES_IGNORE) %s = core::status_scratch(ts, %s);"
                     % (name, name, n))
    return lines


def emit_c_wrappers(out, protos, rows, roles):
    w = out.write
    w("// Generated by core/gen/mpigen.py. Do not edit.\n#include \"mpe/core.h\"\n\nusing namespace mpe;\n\n")
    for name in sorted(protos):
        emit_c_wrapper(w, name, protos[name], rows, roles, stacked=False)
    # The same wrappers as one layer of a stack of PMPI tools (libmpestack, docs/stack.md): the stack
    # calls them with the application's call site, which their own return address no longer is.
    w("// Entry points for libmpestack: the application's return address and the layer below come first.\n")
    for name in sorted(protos):
        if not protos[name].variadic or name == "MPI_Pcontrol":
            emit_c_wrapper(w, name, protos[name], rows, roles, stacked=True)


def emit_c_wrapper(w, name, proto, rows, roles, stacked):
    row, large = base_row(name, rows)
    rmap = resolve_roles(proto, row) if row else {}
    decl = ", ".join(p.text for p in proto.params) + (", ..." if proto.variadic else "")
    # Stacked, the call goes on through the layer below ours, which the stack passes in.
    forward = "mpe_next_" if stacked else "P" + name
    call = "%s(%s)" % (forward, arg_list(proto))
    returns_rc = proto.ret == "int"
    if stacked:
        w("extern \"C\" MPE_EXPORT %s %s%s(uintptr_t mpe_caller_, decltype(&P%s) mpe_next_%s) {\n"
          % (proto.ret, STACKED_PREFIX, name, name, ", " + decl if decl else ""))
    else:
        w("extern \"C\" MPE_EXPORT %s %s(%s) {\n" % (proto.ret, name, decl or "void"))
    w("  core::ThreadState& ts = core::thread_state();\n")
    w("  if (!core::observing(ts)) return %s;\n" % call)
    for line in status_substitution(proto, rmap, roles):
        w(line + "\n")
    w("  Call call;\n  core::poison(call);\n")
    w("  call.fn = Fn::%s;\n  call.cls = CallClass::%s;\n" % (name, class_enumerator(row.cls if row else "other")))
    w("  call.mode = Mode::%s;\n" % (MODES[row.mode] if row else "kBlocking"))
    w("  call.flags = %s;\n" % ("kLargeCount" if large else "0"))
    w("  call.roles = %s;\n" % role_bits(rmap))
    w("  call.caller = %s;\n" % ("mpe_caller_" if stacked else
                                  "reinterpret_cast<uintptr_t>(__builtin_return_address(0))"))
    for line in emit_role_assignments(proto, rmap, roles):
        w(line + "\n")
    cls = row.cls if row else "other"
    call = "%s(%s)" % (forward, forwarded_arg_list(proto, rmap, roles))
    w("  core::enter(ts, call, CallClass::%s);\n" % class_enumerator(cls))
    if cls == "finalize":
        w("  core::before_finalize(ts);\n")
    if returns_rc:
        w("  call.rc = %s;\n" % call)
    else:
        w("  %s result = %s;\n  call.rc = MPI_SUCCESS;\n" % (proto.ret, call))
    if cls == "init":
        w("  if (call.rc == MPI_SUCCESS) core::after_init(ts);\n")
    w("  core::leave(ts, call, CallClass::%s);\n" % class_enumerator(cls))
    w("  return %s;\n}\n\n" % ("call.rc" if returns_rc else "result"))


# ---- Fortran ---------------------------------------------------------------------------------

def is_char_param(p):
    return re.search(r"\bchar\b", p.ctype) is not None


def fortran_signature(proto, cls):
    """Argument list of the mpif.h binding: every C argument by reference, ierr last, then one
    hidden length per character argument. Returns (params, has_ierr, return type)."""
    params = list(proto.params)
    if cls == "init":
        params = [p for p in params if p.name not in ("argc", "argv")]
    if proto.ret not in ("int",):
        return params, False, proto.ret
    return params, True, "void"


@dataclass
class FortranBinding:
    """One Fortran entry point of one MPI routine: mpif.h / use mpi (mpi_x_), or mpi_f08
    (mpi_x_f08_, and MPICH's mpi_x_f08ts_ whose choice buffers arrive as array descriptors)."""
    entry: str          # the symbol the application calls
    pmpi: str           # the MPI's own entry point beneath it
    cname: str          # the C routine whose prototype and table row it follows
    descriptors: bool   # choice buffers arrive as array descriptors (TS 29113 "ts" bindings)
    optional_ierr: bool # mpi_f08: ierror is OPTIONAL, so the pointer may be null
    index_base: int = 1 # what the MPI returns in Waitany/Waitsome indices (MPICH 4.0.2's f08: 0)


def fortran_bindings(exported, protos, f08_index_base=1):
    """The Fortran entry points to wrap: every exported pmpi_x_ (mpif.h, use mpi), and every
    exported mpi_x_f08_ / mpi_x_f08ts_ (use mpi_f08, with _large_ for MPI_Count arguments) whose
    PMPI twin the MPI also exports (Open MPI: pmpi_x_f08_; MPICH: pmpir_x_f08ts_), each with a
    C routine behind it."""
    by_lower = {n.lower(): n for n in protos}
    out = []
    for sym in sorted(exported):
        m = re.match(r"^pmpi_([a-z0-9_]+?)_$", sym)
        if m and not m.group(1).endswith("_") and "f08" not in m.group(1):
            cname = by_lower.get("mpi_" + m.group(1))
            if cname and not cname.endswith("_c"):
                out.append(FortranBinding("mpi_%s_" % m.group(1), sym, cname, False, False))
            continue
        m = re.match(r"^mpi_([a-z0-9_]+?)_(f08|f08ts)(_large)?_$", sym)
        if not m:
            continue
        name, kind, large = m.group(1), m.group(2), m.group(3) or ""
        cname = by_lower.get("mpi_" + name + ("_c" if large else ""))
        pmpi = next((p for p in ("pmpi_%s_%s%s_" % (name, kind, large), "pmpir_%s_%s%s_" % (name, kind, large))
                     if p in exported), None)
        if cname and pmpi:
            out.append(FortranBinding(sym, pmpi, cname, kind == "f08ts", True, f08_index_base))
    return out


# role kind -> the handle type of a handle argument converted with PMPI_X_f2c
HANDLE_IN = {"type": "Type", "comm": "Comm", "op": "Op", "win": "Win", "file": "File"}
# role kind -> handle type of an output handle (a new communicator or window, a message), converted
# from the Fortran integer before the call (for in-out handles: MPI_Win_free, MPI_Mrecv) and again
# after it
HANDLE_OUT = {"comm_out": "Comm", "win_out": "Win", "message": "Message"}
# Order of the conversions: arrays whose length another role gives come after that role.
ARRAY_KINDS = ("requests", "statuses", "indices_out", "types")


def scalar_type(p):
    """The C type a Fortran integer argument holds, from the C parameter: INTEGER, or
    INTEGER(KIND=MPI_COUNT_KIND / MPI_ADDRESS_KIND / MPI_OFFSET_KIND)."""
    for t in ("MPI_Count", "MPI_Aint", "MPI_Offset"):
        if re.search(r"\b%s\b" % t, p.ctype):
            return t
    return "MPI_Fint"


def fortran_conversions(cname, proto, params, rmap, roles, binding):
    """Statements before the PMPI call (pre) and after it (post) that give the tools the C view of
    each role argument. `rmap` maps role -> index into `params` (the Fortran arguments)."""
    pre, post = [], []
    def order(item):
        return roles[item[0]] in ARRAY_KINDS
    for role, idx in sorted(rmap.items(), key=order):
        kind = roles[role]
        a = "a%d" % idx
        fint = "*static_cast<MPI_Fint*>(%s)" % a
        if kind in ("count", "int"):
            t = scalar_type(params[idx])
            pre.append("  call.%s = static_cast<%s>(*static_cast<%s*>(%s));"
                       % (role, "int64_t" if kind == "count" else "int", t, a))
        elif kind in HANDLE_IN:
            pre.append("  call.%s = PMPI_%s_f2c(%s);" % (role, HANDLE_IN[kind], fint))
        elif kind == "buf":
            fn = "descriptor_buffer" if binding.descriptors else "buffer"
            pre.append("  call.%s = core::fortran::%s(%s);" % (role, fn, a))
        elif kind == "counts":
            pre.append("  call.%s = static_cast<const void*>(%s);" % (role, a))
        elif kind in ("int_out",):
            pre.append("  call.%s = static_cast<int*>(%s);" % (role, a))
        elif kind in HANDLE_OUT:
            h = HANDLE_OUT[kind]
            pre.append("  MPI_%s %s_c_ = PMPI_%s_f2c(%s);" % (h, role, h, fint))
            pre.append("  call.%s = &%s_c_;" % (role, role))
            post.append("  %s_c_ = PMPI_%s_f2c(%s);" % (role, h, fint))
        elif kind == "status":
            pre.append("  MPI_Fint* fstatus_ = static_cast<MPI_Fint*>(%s);" % a)
            pre.append("  MPI_Fint fstatus_storage_[core::fortran::kStatusInts];")
            pre.append("  if (core::fortran::status_ignored(fstatus_))")
            pre.append("    fstatus_ = core::wants_status() ? static_cast<MPI_Fint*>(%s = fstatus_storage_) : nullptr;" % a)
            pre.append("  MPI_Status status_c_;\n  call.%s = &status_c_;" % role)
            post.append("  if (fstatus_ && call.rc == MPI_SUCCESS) PMPI_Status_f2c(fstatus_, &status_c_);")
            post.append("  else call.%s = MPI_STATUS_IGNORE;" % role)
        elif kind == "requests" and "nrequests" not in rmap:
            pre.append("  MPI_Request request_c_ = PMPI_Request_f2c(%s);" % fint)
            pre.append("  call.%s = &request_c_;" % role)
            post.append("  request_c_ = PMPI_Request_f2c(%s);" % fint)
        elif kind == "requests":
            pre.append("  call.%s = core::fortran::requests(ts, %s, call.nrequests);" % (role, a))
            pre.append("  if (!call.%s) {\n    core::fortran::lost(\"requests\");\n    call.roles &= ~role::%s;\n  }" % (role, role))
            post.append("  if (call.has(role::%s)) core::fortran::refresh_requests(call.%s, %s, call.nrequests);"
                        % (role, role, a))
        elif kind == "statuses":
            n = "call.nrequests" if "nrequests" in rmap else "1"
            done = n
            if "outcount" in rmap:
                done = "(*call.outcount > 0 && *call.outcount != MPI_UNDEFINED ? *call.outcount : 0)"
            pre.append("  MPI_Fint* fstatuses_ = static_cast<MPI_Fint*>(%s);" % a)
            pre.append("  if (core::fortran::statuses_ignored(fstatuses_)) {")
            pre.append("    fstatuses_ = core::wants_status() ? core::fortran::status_storage(ts, %s) : nullptr;" % n)
            pre.append("    if (fstatuses_) %s = fstatuses_;" % a)
            pre.append("  }")
            pre.append("  call.%s = MPI_STATUSES_IGNORE;" % role)
            post.append("  if (fstatuses_ && (call.rc == MPI_SUCCESS || call.rc == MPI_ERR_IN_STATUS)) {")
            post.append("    call.%s = core::fortran::statuses(ts, fstatuses_, %s);" % (role, done))
            post.append("    if (!call.%s) {\n      core::fortran::lost(\"statuses\");\n      call.%s = MPI_STATUSES_IGNORE;\n    }" % (role, role))
            post.append("  }")
        elif kind == "index_out":
            pre.append("  int %s_c_ = MPI_UNDEFINED;\n  call.%s = &%s_c_;" % (role, role, role))
            # MPI_UNDEFINED, or below the base (MPICH's mpif.h returns MPI_UNDEFINED + 1), is none.
            post.append("  %s_c_ = %s == MPI_UNDEFINED || %s < %d ? MPI_UNDEFINED : %s - %d;"
                        % (role, fint, fint, binding.index_base, fint, binding.index_base))
        elif kind == "indices_out":
            if "outcount" not in rmap:
                fail("%s: role %s needs an outcount role" % (cname, role))
            pre.append("  call.%s = nullptr;" % role)
            post.append("  if (call.rc == MPI_SUCCESS && *call.outcount > 0 && *call.outcount != MPI_UNDEFINED) {")
            post.append("    call.%s = core::fortran::indices(ts, %s, *call.outcount, %d);" % (role, a, binding.index_base))
            post.append("    if (!call.%s) {\n      core::fortran::lost(\"indices\");\n      call.roles &= ~role::%s;\n    }" % (role, role))
            post.append("  }")
        elif kind == "types":
            send = "true" if role.startswith("send") else "false"
            skip = ""
            if send == "true" and "sendbuf" in rmap:
                skip = "call.sendbuf == MPI_IN_PLACE ? nullptr : "  # ignored by MPI, may be a dummy
            pre.append("  call.%s = %score::fortran::types(ts, %s, %s, mpe::per_peer_count(call.cls, call.comm, %s));"
                       % (role, skip, send, a, send))
        else:
            fail("%s: no Fortran conversion for role %s of kind %s" % (cname, role, kind))
    return pre, post


def emit_fortran_wrapper(w, proto, row, roles, binding):
    cls = row.cls if row else "other"
    params, has_ierr, ret = fortran_signature(proto, cls)
    if proto.variadic and cls != "pcontrol":
        return False
    # MPI_Pcontrol(level) has no ierror in Open MPI's mpif.h binding nor in mpi_f08, while MPICH's
    # mpif.h binding takes one: the argument is forwarded but never read.
    reads_ierr = has_ierr and cls != "pcontrol"
    if cls == "pcontrol" and binding.optional_ierr:
        has_ierr = False
    nchar = sum(1 for p in params if is_char_param(p))
    args = ["void* a%d" % i for i in range(len(params))]
    if has_ierr:
        args.append("MPI_Fint* ierr")
    args += ["size_t len%d" % i for i in range(nchar)]
    ptypes = ["void*"] * len(params) + (["MPI_Fint*"] if has_ierr else []) + ["size_t"] * nchar
    lens = ["len%d" % i for i in range(nchar)]
    def forward(ierr):
        return "%s(%s)" % (binding.pmpi, ", ".join(["a%d" % i for i in range(len(params))] +
                                                   ([ierr] if has_ierr else []) + lens))
    w("extern \"C\" %s %s(%s);\n" % (ret, binding.pmpi, ", ".join(ptypes) or "void"))
    w("extern \"C\" MPE_EXPORT %s %s(%s) {\n" % (ret, binding.entry, ", ".join(args) or "void"))
    w("  core::ThreadState& ts = core::thread_state();\n")
    if ret != "void":
        w("  if (!core::observing(ts)) return %s;\n" % forward("ierr"))
    else:
        w("  if (!core::observing(ts)) {\n    %s;\n    return;\n  }\n" % forward("ierr"))
    rmap = {}
    if row:
        full = resolve_roles(proto, row)
        # Map C argument indices to Fortran argument indices (Init drops argc/argv).
        index_of = {id(p): i for i, p in enumerate(params)}
        for role, idx in full.items():
            p = proto.params[idx]
            if id(p) in index_of:
                rmap[role] = index_of[id(p)]
    large = binding.cname.endswith("_c")
    w("  Call call;\n  core::poison(call);\n  call.fn = Fn::%s;\n  call.cls = CallClass::%s;\n"
      % (binding.cname, class_enumerator(cls)))
    w("  call.mode = Mode::%s;\n  call.flags = %s;\n" % (MODES[row.mode] if row else "kBlocking",
                                                       "kFortran | kLargeCount" if large else "kFortran"))
    pre, post = fortran_conversions(binding.cname, proto, params, rmap, roles, binding)
    w("  call.roles = %s;\n" % role_bits(rmap))
    w("  call.caller = reinterpret_cast<uintptr_t>(__builtin_return_address(0));\n")
    for line in pre:
        w(line + "\n")
    w("  core::enter(ts, call, CallClass::%s);\n" % class_enumerator(cls))
    if cls == "finalize":
        w("  core::before_finalize(ts);\n")
    w("  core::suppress(ts);\n")
    # mpi_f08's ierror is OPTIONAL: the MPI gets our own, copied back when the caller passed one.
    ierr_arg = "&ierr_" if binding.optional_ierr and has_ierr else "ierr"
    if binding.optional_ierr and has_ierr:
        w("  MPI_Fint ierr_ = MPI_SUCCESS;\n")
    if ret != "void":
        w("  %s result = %s;\n" % (ret, forward(ierr_arg)))
    else:
        w("  %s;\n" % forward(ierr_arg))
    w("  core::unsuppress(ts);\n")
    if binding.optional_ierr and has_ierr:
        w("  if (ierr) *ierr = ierr_;\n")
    w("  call.rc = %s;\n" % (("ierr_" if binding.optional_ierr else "*ierr") if reads_ierr else "MPI_SUCCESS"))
    for line in post:
        w(line + "\n")
    if cls == "init":
        w("  if (call.rc == MPI_SUCCESS) core::after_init(ts);\n")
    w("  core::leave(ts, call, CallClass::%s);\n" % class_enumerator(cls))
    if ret != "void":
        w("  return result;\n")
    w("}\n\n")
    return True


def emit_fortran_wrappers(out, protos, rows, roles, bindings):
    w = out.write
    w("// Generated by core/gen/mpigen.py. Do not edit.\n")
    w("// Fortran bindings (mpif.h, use mpi, use mpi_f08): arguments arrive by reference; handles,\n")
    w("// handle arrays and sentinels are converted so the tools see the C view (mpe/fortran.h). What\n")
    w("// the MPI's binding does beneath (MPICH's calls MPI_X) is suppressed, so each call is seen once.\n")
    w("#include \"mpe/bytes.h\"\n#include \"mpe/core.h\"\n#include \"mpe/fortran.h\"\n#include <cstddef>\n\n")
    w("using namespace mpe;\n\n")
    wrapped = []
    for binding in bindings:
        proto = protos[binding.cname]
        row, _ = base_row(binding.cname, rows)
        if emit_fortran_wrapper(w, proto, row, roles, binding):
            wrapped.append(binding.entry)
    return wrapped


# ---- libmpestack: MPI_X and PMPI_X dispatched through a stack of PMPI tools (docs/stack.md) ----

def emit_stack_c(out, protos):
    """MPI_X and PMPI_X for every C routine, each entering the stack (mpe/stack.h) at the level
    the plain PMPI rules give; MPI_Pcontrol, variadic, reaches every layer (stack.cpp)."""
    w = out.write
    w("// Generated by core/gen/mpigen.py. Do not edit.\n#include \"mpe/stack.h\"\n\n")
    w("using namespace mpe;\nusing namespace mpe::stack;\n\n")
    for name in sorted(protos):
        proto = protos[name]
        if proto.variadic:
            continue
        decl = ", ".join(p.text for p in proto.params) or "void"
        args = ", ".join(p.name for p in proto.params)
        # Handle conversions called by the MPI's Fortran binding (Open MPI's converts each handle
        # with PMPI_X_f2c) are the binding's own work, not the application's: the MPI library's.
        conversion = re.search(r"_(f2c|c2f|f082c|c2f08|f2f08|f082f)$", name) is not None
        for entry, start in ((name, "start_for_mpi"), ("P" + name, "start_for_pmpi")):
            w("extern \"C\" MPE_EXPORT %s %s(%s) {\n" % (proto.ret, entry, decl))
            w("  return dispatch<%s>(Fn::%s, %s<%s>(MPE_RETURN_ADDRESS())%s);\n}\n"
              % (proto.ret, name, start, "true" if conversion else "false", ", " + args if args else ""))
        # What our layer's wrapper calls to go on to the layers below it.
        w("%s below_mpe_%s(%s) {\n  return dispatch_below_mpe<%s>(Fn::%s%s);\n}\n\n"
          % (proto.ret, name, decl, proto.ret, name, ", " + args if args else ""))
    w("namespace mpe::stack {\nvoid* const kBelowMpe[kFnCount] = {\n")
    for name in sorted(protos):
        below = "reinterpret_cast<void*>(&below_mpe_%s)" % name
        if protos[name].variadic:
            below = "reinterpret_cast<void*>(&below_mpe_pcontrol)" if name == "MPI_Pcontrol" else "nullptr"
        w("    %s,\n" % below)
    w("};\n}  // namespace mpe::stack\n")


def emit_stack_f(out, protos, rows, bindings):
    """The MPI's Fortran entry points placed above every layer: each records the application's
    call site and enters the MPI's own binding, whose C calls then go down the whole stack."""
    w = out.write
    w("// Generated by core/gen/mpigen.py. Do not edit.\n#include <cstddef>\n\n#include \"mpe/stack.h\"\n\n")
    w("using namespace mpe::stack;\n\n")
    count = 0
    for binding in bindings:
        proto = protos[binding.cname]
        row, _ = base_row(binding.cname, rows)
        cls = row.cls if row else "other"
        if proto.variadic:
            continue  # MPI_Pcontrol: its Fortran ierror differs between MPIs; the binding's C call is seen
        params, has_ierr, ret = fortran_signature(proto, cls)
        nchar = sum(1 for p in params if is_char_param(p))
        ptypes = ["void*"] * len(params) + (["MPI_Fint*"] if has_ierr else []) + ["size_t"] * nchar
        names = ["a%d" % i for i in range(len(ptypes))]
        w("extern \"C\" %s %s(%s);\n" % (ret, binding.pmpi, ", ".join(ptypes) or "void"))
        w("extern \"C\" MPE_EXPORT %s %s(%s) {\n" % (
            ret, binding.entry, ", ".join("%s %s" % tn for tn in zip(ptypes, names)) or "void"))
        w("  FortranEntry entry(MPE_RETURN_ADDRESS());\n")
        w("  %s%s(%s);\n}\n\n" % ("return " if ret != "void" else "", binding.pmpi, ", ".join(names)))
        count += 1
    return count


def emit_info(out, protos, rows, roles, classes):
    w = out.write
    w("// Generated by core/gen/mpigen.py. Do not edit.\n#include \"mpe/calls.h\"\n\nnamespace mpe {\n")
    w("const FnInfo kFnInfo[kFnCount] = {\n")
    for name in sorted(protos):
        row, _ = base_row(name, rows)
        bits = role_bits(resolve_roles(protos[name], row) if row else {})
        w("  {\"%s\", CallClass::%s, Mode::%s, %s},\n" % (
            name, class_enumerator(row.cls if row else "other"), MODES[row.mode] if row else "kBlocking", bits))
    w("};\nconst char* const kCallClassName[kCallClassCount] = {\"other\", %s};\n}  // namespace mpe\n"
      % ", ".join('"%s"' % c for c in classes))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", required=True, help="preprocessed mpi.h")
    ap.add_argument("--table", required=True)
    ap.add_argument("--exported", help="file with the PMPI_/pmpi_ names the MPI libraries export")
    ap.add_argument("--f08-index-base", type=int, choices=(0, 1), default=1,
                    help="the index base this MPI's mpi_f08 Waitany/Waitsome return (probed by CMake)")
    ap.add_argument("--outdir", required=True)
    a = ap.parse_args()
    protos = parse_header(a.header)
    if not protos:
        fail("no PMPI_ prototypes found in " + a.header)
    roles, rows = parse_table(a.table)
    classes = []
    for r in rows.values():
        if r.cls not in classes:
            classes.append(r.cls)
    bindings, unexported = [], []
    if a.exported:
        exported = set(line.strip() for line in open(a.exported))
        unexported = sorted(n for n in protos if "P" + n not in exported)
        for n in unexported:
            del protos[n]
        bindings = fortran_bindings(exported, protos, a.f08_index_base)
    import os
    os.makedirs(os.path.join(a.outdir, "mpe"), exist_ok=True)

    def write(path, fn, *args):
        tmp = os.path.join(a.outdir, path + ".tmp")
        with open(tmp, "w") as f:
            result = fn(f, *args)
        os.replace(tmp, os.path.join(a.outdir, path))
        return result

    write("mpe/calls.h", emit_header, roles, protos, rows, classes)
    write("calls_info.cpp", emit_info, protos, rows, roles, classes)
    write("wrappers_c.cpp", emit_c_wrappers, protos, rows, roles)
    fwrapped = write("wrappers_f.cpp", emit_fortran_wrappers, protos, rows, roles, bindings)
    write("stack_c.cpp", emit_stack_c, protos)
    write("stack_f.cpp", emit_stack_f, protos, rows, bindings)
    missing = [n for n in rows if n not in protos]
    with open(os.path.join(a.outdir, "wrapped.txt"), "w") as f:
        for n in sorted(protos):
            f.write(n + "\n")
        for n in fwrapped:
            f.write(n + "\n")
    print("mpigen: %d C wrappers, %d Fortran wrappers, %d table rows (%d not in this MPI); "
          "declared but not exported, so not wrapped: %s" % (
              len(protos), len(fwrapped), len(rows), len(missing), " ".join(unexported) or "none"))


if __name__ == "__main__":
    main()
