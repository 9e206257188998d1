"""duet from Python: hardware profiles, plans, simulations and predictions as plain dicts.

A thin layer of ctypes over libduet.so's JSON entry point, duet_predict_json() (include/duet/sim.h):
no compiled extension and nothing outside the standard library. Every time is in microseconds (keys
ending in ``_us``), every size in bytes. docs/python.md describes the functions and their results.

The library is found through the ``DUET_LIBRARY`` environment variable (a path to libduet.so), then in
the build folder of the source tree this package sits in (``build/libduet.so``), then where the
system's loader looks (``ctypes.util.find_library("duet")``).
"""

import ctypes
import ctypes.util
import json
import os

__all__ = [
    "DuetError",
    "library_path",
    "version",
    "hw_list",
    "hw",
    "plan",
    "simulate",
    "predict",
    "request",
]


class DuetError(Exception):
    """A call the library refused or failed: ``status`` is its duet_status_t, the message its text."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


_LIB = None


def library_path():
    """The path of the libduet.so this package loads (or would load)."""
    env = os.environ.get("DUET_LIBRARY")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for name in ("libduet.so", "libduet.so.0"):
        candidate = os.path.join(here, "..", "..", "build", name)
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    found = ctypes.util.find_library("duet")
    if found:
        return found
    raise DuetError(-1, "libduet.so not found: build it (make) or set DUET_LIBRARY to its path")


def _lib():
    global _LIB
    if _LIB is None:
        path = library_path()
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise DuetError(-1, "cannot load %s: %s" % (path, e)) from None
        lib.duet_predict_json.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.duet_predict_json.restype = ctypes.c_int
        lib.duet_json_free.argtypes = [ctypes.c_void_p]
        lib.duet_json_free.restype = None
        lib.duet_last_error.argtypes = []
        lib.duet_last_error.restype = ctypes.c_char_p
        lib.duet_version.argtypes = []
        lib.duet_version.restype = ctypes.c_char_p
        lib.duet_hw_builtin_count.argtypes = []
        lib.duet_hw_builtin_count.restype = ctypes.c_int
        lib.duet_hw_builtin_name.argtypes = [ctypes.c_int]
        lib.duet_hw_builtin_name.restype = ctypes.c_char_p
        _LIB = lib
    return _LIB


def version():
    """The version of the loaded library, e.g. "0.2.0"."""
    return _lib().duet_version().decode()


def request(req):
    """Send one request (a dict, see docs/python.md) to duet_predict_json() and return the answer as a dict."""
    lib = _lib()
    out = ctypes.c_void_p()
    st = lib.duet_predict_json(json.dumps(req).encode(), ctypes.byref(out))
    if st < 0:
        raise DuetError(st, lib.duet_last_error().decode(errors="replace"))
    try:
        return json.loads(ctypes.string_at(out.value).decode())
    finally:
        lib.duet_json_free(out)


def hw_list():
    """The names of the built-in hardware profiles."""
    lib = _lib()
    return [lib.duet_hw_builtin_name(i).decode() for i in range(lib.duet_hw_builtin_count())]


def hw(profile="h200"):
    """A hardware profile (schema duet-hw/1): a built-in name, a JSON file's path, or a profile dict."""
    return request({"op": "hw", "hw": profile})


def _workload(kw):
    # gemm=(m, n, k) and comm=(mc, nc) as in the CLI's --gemm MxNxK and --comm McxNc.
    req = {}
    gemm = kw.pop("gemm", None)
    if gemm is not None:
        req["m"], req["n"], req["k"] = (int(x) for x in gemm)
    comm = kw.pop("comm", None)
    if comm is not None:
        req["mc"], req["nc"] = (int(x) for x in comm)
    for key in ("collective", "dtype", "world", "root", "comm_bytes", "hw"):
        if key in kw and kw[key] is not None:
            req[key] = kw.pop(key)
    return req


def plan(gemm=None, collective=None, comm=None, config=None, **kw):
    """The plan of one workload and configuration (schema duet-plan/1): tiles, bytes, FLOPs, a tile's price."""
    req = _workload(dict(kw, gemm=gemm, collective=collective, comm=comm))
    req.update({k: v for k, v in kw.items() if k == "rank"})
    req["op"] = "plan"
    if config:
        req["config"] = dict(config)
    return request(req)


def simulate(gemm=None, collective=None, comm=None, config=None, policy=None, **kw):
    """Simulate one configuration (schema duet-simulate/1): makespan_us, queue finishes, busbw."""
    req = _workload(dict(kw, gemm=gemm, collective=collective, comm=comm))
    req["op"] = "simulate"
    if config:
        req["config"] = dict(config)
    if policy:
        req["policy"] = policy
    return request(req)


def predict(gemm=None, collective=None, comm=None, modes=None, tiles=None, split_ks=None, split_step=None,
            top=10, policy=None, emit=None, running_vendor=None, **kw):
    """Sweep and rank configurations (schema duet-predict/2), as ``duet predict --json``.

    modes: list of "fused", "concurrent", "vendor"; tiles: list of "BMxBNxBK"; top: rows (0 for all);
    emit: "nccl", "rccl", "torch", "te" or "env" adds the best vendor split as that stack's settings;
    running_vendor: (gemm_sms, comm_ctas) or gemm_sms, the vendor split you run, the safe choice of the
    decision instead of the static default. Rows are ranked by the upper end of their interval (hi_us);
    "decision" says whether the predicted gain of leaving the safe choice exceeds the model's error band.
    """
    req = _workload(dict(kw, gemm=gemm, collective=collective, comm=comm))
    req["op"] = "predict"
    req["top"] = int(top)
    for key, value in (("modes", modes), ("tiles", tiles), ("split_ks", split_ks), ("split_step", split_step),
                       ("policy", policy), ("emit", emit)):
        if value is not None:
            req[key] = list(value) if key in ("modes", "tiles", "split_ks") else value
    if running_vendor is not None:
        g, c = (running_vendor, None) if isinstance(running_vendor, int) else tuple(running_vendor)
        req["running_vendor"] = {"gemm_sms": int(g)} if c is None else {"gemm_sms": int(g), "comm_ctas": int(c)}
    return request(req)
