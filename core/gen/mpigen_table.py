"""core/mpi_calls.tsv, read: the roles, the classes' meanings and one row per routine.

The one table parser: mpigen.py (the wrappers) and routines.py (the offline tools' routine table)
both read the table through it.
"""
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


def class_enumerator(cls):
    """The CallClass enumerator of a class name in the table: send_init -> kSendInit."""
    return "k" + "".join(part.capitalize() for part in cls.split("_"))


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


def base_row(name, rows):
    if name in rows:
        return rows[name], False
    if name.endswith("_c") and name[:-2] in rows:
        return rows[name[:-2]], True
    return None, name.endswith("_c")
