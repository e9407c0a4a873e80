"""MPE's logging API for Python programs: your own states and events in liblog's logfile.

    import mpelog
    compute = mpelog.State("compute", "SeaGreen")   # every rank, in the same order
    with compute:
        sweep()
    converged = mpelog.Event("converged", "red")
    converged.log(iteration)

It calls liblog's MPE_* functions (mpe_log.h) through ctypes, so it needs liblog in the process:
`mpe run --log -- mpiexec -n 4 python3 app.py` preloads it and puts this module on PYTHONPATH.
Each state and event is placed at the Python line that logged it, as MPI calls from mpi4py are.
Without liblog every call does nothing, and `mpelog.active` is False; one line says so.
"""

import ctypes
import sys

__all__ = ["State", "Event", "start", "stop", "active"]


def _liblog():
    try:
        lib = ctypes.CDLL(None)  # the process's global symbols: a preloaded liblog's among them
        lib.MPE_Log_get_state_eventIDs
    except (OSError, AttributeError):
        sys.stderr.write("mpelog: liblog is not loaded (run under `mpe run --log`); nothing is logged\n")
        return None
    int_p = ctypes.POINTER(ctypes.c_int)
    for name, args in (("MPE_Log_get_state_eventIDs", [int_p, int_p]),
                       ("MPE_Log_get_solo_eventID", [int_p]),
                       ("MPE_Describe_state", [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]),
                       ("MPE_Describe_event", [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p]),
                       ("MPE_Log_event", [ctypes.c_int, ctypes.c_int, ctypes.c_char_p]),
                       ("MPE_Start_log", []),
                       ("MPE_Stop_log", [])):
        function = getattr(lib, name)
        function.argtypes = args
        function.restype = ctypes.c_int
    return lib


_lib = _liblog()
active = _lib is not None


class State:
    """A named, coloured state: `with state:` logs its start and its end (MPE_Describe_state)."""

    def __init__(self, name, color="gray"):
        self.start_id = self.end_id = 0
        if _lib is None:
            return
        start, end = ctypes.c_int(), ctypes.c_int()
        _lib.MPE_Log_get_state_eventIDs(ctypes.byref(start), ctypes.byref(end))
        self.start_id, self.end_id = start.value, end.value
        _lib.MPE_Describe_state(self.start_id, self.end_id, name.encode(), color.encode())

    def begin(self, data=0):
        if _lib is not None:
            _lib.MPE_Log_event(self.start_id, data, None)

    def end(self, data=0):
        if _lib is not None:
            _lib.MPE_Log_event(self.end_id, data, None)

    def __enter__(self):
        self.begin()
        return self

    def __exit__(self, *exc):
        self.end()
        return False


class Event:
    """A named, coloured instant (MPE_Describe_event); log(data) records it with an integer."""

    def __init__(self, name, color="gray"):
        self.id = 0
        if _lib is None:
            return
        event = ctypes.c_int()
        _lib.MPE_Log_get_solo_eventID(ctypes.byref(event))
        self.id = event.value
        _lib.MPE_Describe_event(self.id, name.encode(), color.encode())

    def log(self, data=0):
        if _lib is not None:
            _lib.MPE_Log_event(self.id, data, None)


def start():
    """Resumes logging (MPE_Start_log, like MPI_Pcontrol(1))."""
    if _lib is not None:
        _lib.MPE_Start_log()


def stop():
    """Pauses logging (MPE_Stop_log, like MPI_Pcontrol(0))."""
    if _lib is not None:
        _lib.MPE_Stop_log()
