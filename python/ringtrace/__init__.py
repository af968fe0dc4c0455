# Copyright (C) 2026 The ringtrace authors.
"""Trace Python code into ringtrace sessions.

A thin layer (ctypes) over the ringtrace C API, libringtrace_c.so
(include/ringtrace/c/ringtrace.h, docs/c_api.md): the events are written by
the C++ SDK inside the library, into the shared ring of this process's
connection to the ringtraced service, or to the service the library runs
inside this process (backends=BACKEND_IN_PROCESS: no daemon).

    import ringtrace

    ringtrace.init(name="my_script")          # the default socket
    ringtrace.register_category("app", description="My script")

    with ringtrace.slice("app", "load", path=path, retries=2):
        ...

    @ringtrace.traced("app")
    def step(): ...

    ringtrace.instant("app", "ready")
    ringtrace.counter("app", "queue", 3)        # int: int64, float: double
    ringtrace.flush()

Recording this process with no daemon:

    ringtrace.init(backends=ringtrace.BACKEND_IN_PROCESS)
    with ringtrace.Session(CONFIG_TEXT) as session:  # a TraceConfig, text
        session.start()
        ...                                      # events
        session.stop()
        trace = session.read_trace()             # the Perfetto trace file

The library is found at $RINGTRACE_C_LIBRARY, else next to this package,
else where tools/install puts it (PREFIX/lib, the package being in
PREFIX/share/ringtrace/python), else by the dynamic linker
(libringtrace_c.so on its search path).

Categories are registered at run time (a name used before it is registered
is registered then, with no description). An event of a category no session
enables costs a read of the category's mask (shared with the library) and a
branch, in Python; its arguments are still evaluated by Python, as for any
call. Argument values: bool, int (int64, or uint64 when above), float, str;
anything else is written as its str(). Errors of the library raise
ringtrace.Error; a value the C API cannot take raises TypeError or
ValueError.

Threads: every function may be called from any thread; each thread's slices
nest on its own track.
"""

import ctypes
import ctypes.util
import functools
import os
import threading

__all__ = [
    "ABI_VERSION", "BACKEND_IN_PROCESS", "BACKEND_SYSTEM", "Category",
    "Error", "Session", "counter", "flush", "init", "instant", "is_connected",
    "is_enabled", "register_category", "shutdown", "slice", "traced",
]

# The ABI this module speaks (RINGTRACE_C_ABI_VERSION).
ABI_VERSION = 1

OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_NOT_INITIALIZED = 2
ERR_ALREADY_INITIALIZED = 3
ERR_ABI_MISMATCH = 4
ERR_UNSUPPORTED = 5
ERR_FAILED = 6

BACKEND_SYSTEM = 1
BACKEND_IN_PROCESS = 2

_ARG_INT64 = 1
_ARG_UINT64 = 2
_ARG_DOUBLE = 3
_ARG_BOOL = 4
_ARG_STRING = 5
_MAX_ARGS = 32

_INT64_MIN = -(1 << 63)
_INT64_LIMIT = 1 << 63
_UINT64_LIMIT = 1 << 64


class Error(Exception):
    """An error the C API returned: .code (ERR_*) and .message."""

    def __init__(self, code, message):
        super().__init__("ringtrace: %s (code %d)" % (message, code))
        self.code = code
        self.message = message


class _InitOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("abi_version", ctypes.c_uint32),
        ("backends", ctypes.c_uint32),
        ("wait_for_connection_ms", ctypes.c_uint32),
        ("producer_socket_path", ctypes.c_char_p),
        ("producer_name", ctypes.c_char_p),
    ]


class _SessionOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("abi_version", ctypes.c_uint32),
        ("backend", ctypes.c_uint32),
        ("timeout_ms", ctypes.c_uint32),
        ("consumer_socket_path", ctypes.c_char_p),
    ]


class _ArgValue(ctypes.Union):
    _fields_ = [
        ("int64_value", ctypes.c_int64),
        ("uint64_value", ctypes.c_uint64),
        ("double_value", ctypes.c_double),
        ("bool_value", ctypes.c_int32),
        ("string_value", ctypes.c_char_p),
    ]


class _Arg(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("type", ctypes.c_uint32),
        ("value", _ArgValue),
    ]


def _find_library():
    path = os.environ.get("RINGTRACE_C_LIBRARY")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    # Beside the package, or where tools/install puts it: the package in
    # PREFIX/share/ringtrace/python/ringtrace, the library in PREFIX/lib.
    for candidate in (os.path.join(here, "libringtrace_c.so"),
                      os.path.join(here, "..", "..", "..", "..", "lib",
                                   "libringtrace_c.so")):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    found = ctypes.util.find_library("ringtrace_c")
    if found:
        return found
    raise ImportError("ringtrace: libringtrace_c.so not found (set "
                      "RINGTRACE_C_LIBRARY to its path)")


def _load():
    lib = ctypes.CDLL(_find_library())
    vp, cp, u32, sz = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32,
                       ctypes.c_size_t)
    signatures = {
        "ringtrace_abi_version": ([], u32),
        "ringtrace_last_error": ([], cp),
        "ringtrace_init_options_set_defaults": (
            [ctypes.POINTER(_InitOptions), u32, u32], ctypes.c_int),
        "ringtrace_init": ([ctypes.POINTER(_InitOptions)], ctypes.c_int),
        "ringtrace_is_connected": ([], ctypes.c_int),
        "ringtrace_flush": ([], ctypes.c_int),
        "ringtrace_shutdown": ([], ctypes.c_int),
        "ringtrace_category_register": (
            [cp, cp, ctypes.POINTER(cp), sz, ctypes.POINTER(vp)],
            ctypes.c_int),
        "ringtrace_category_enabled": ([vp], ctypes.c_int),
        "ringtrace_slice_begin": ([vp, cp, u32, ctypes.POINTER(_Arg), sz],
                                  ctypes.c_int),
        "ringtrace_slice_end": ([vp], ctypes.c_int),
        "ringtrace_instant": ([vp, cp, u32, ctypes.POINTER(_Arg), sz],
                              ctypes.c_int),
        "ringtrace_counter_int64": ([vp, cp, u32, ctypes.c_int64],
                                    ctypes.c_int),
        "ringtrace_counter_double": ([vp, cp, u32, ctypes.c_double],
                                     ctypes.c_int),
        "ringtrace_session_options_set_defaults": (
            [ctypes.POINTER(_SessionOptions), u32, u32], ctypes.c_int),
        "ringtrace_session_new": (
            [ctypes.POINTER(_SessionOptions), cp, ctypes.c_int,
             ctypes.POINTER(vp)], ctypes.c_int),
        "ringtrace_session_start": ([vp], ctypes.c_int),
        "ringtrace_session_flush": ([vp, u32], ctypes.c_int),
        "ringtrace_session_stop": ([vp], ctypes.c_int),
        "ringtrace_session_read_trace": (
            [vp, vp, sz, ctypes.POINTER(sz)], ctypes.c_int),
        "ringtrace_session_summary": (
            [vp, ctypes.POINTER(ctypes.c_uint64),
             ctypes.POINTER(ctypes.c_uint64)], ctypes.c_int),
        "ringtrace_session_destroy": ([vp], None),
    }
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype
    version = lib.ringtrace_abi_version()
    if version != ABI_VERSION:
        raise ImportError("ringtrace: the library has ABI version %d, this "
                          "module %d" % (version, ABI_VERSION))
    return lib


_lib = _load()


def _check(code):
    if code != OK:
        raise Error(code, _lib.ringtrace_last_error().decode(
            "utf-8", "replace"))


# Encoded names by text (bounded: a program that makes up names as it goes
# encodes the ones past the bound at each call).
_encoded = {}
_ENCODED_MAX = 4096


def _encode(text, what):
    found = _encoded.get(text)
    if found is not None:
        return found
    if not isinstance(text, str):
        raise TypeError("ringtrace: %s must be a str, not %s" %
                        (what, type(text).__name__))
    encoded = text.encode("utf-8")
    if len(_encoded) < _ENCODED_MAX:
        _encoded[text] = encoded
    return encoded


class Category:
    """A registered category. .enabled reads its mask (no call)."""

    __slots__ = ("name", "_handle", "_mask")

    def __init__(self, name, handle):
        self.name = name
        self._handle = handle
        # The handle's first word is its mask (the C API's ABI).
        self._mask = ctypes.c_uint32.from_address(handle)

    @property
    def enabled(self):
        return self._mask.value != 0

    def __repr__(self):
        return "ringtrace.Category(%r)" % self.name


_categories = {}
_categories_lock = threading.Lock()


def register_category(name, description=None, tags=()):
    """Registers (or returns the registered) category |name|.

    description: one line of text; tags: up to 4 names (a TrackEventConfig
    enables a category tagged "slow" or "debug" only when it asks for it).
    """
    with _categories_lock:
        category = _categories.get(name)
        if category is not None:
            return category
        tags = list(tags)
        tag_array = (ctypes.c_char_p * max(len(tags), 1))(
            *[_encode(t, "a tag") for t in tags])
        handle = ctypes.c_void_p()
        _check(_lib.ringtrace_category_register(
            _encode(name, "a category name"),
            None if description is None else _encode(description,
                                                      "a description"),
            tag_array, len(tags), ctypes.byref(handle)))
        category = Category(name, handle.value)
        _categories[name] = category
        _categories[category] = category  # _category() takes either
        return category


def _category(category):
    found = _categories.get(category)
    if found is not None:
        return found
    if isinstance(category, Category):
        return category
    return register_category(category)


def is_enabled(category):
    """Whether an event of |category| (a name or a Category) is recorded."""
    return _category(category)._mask.value != 0


def init(socket=None, name=None, wait_ms=0, backends=BACKEND_SYSTEM):
    """Starts tracing on |backends| (BACKEND_* bits).

    BACKEND_SYSTEM connects to the ringtraced service (in the background,
    reconnecting); BACKEND_IN_PROCESS starts the service inside this process
    (no daemon; record with Session); both: each backend's sessions get the
    categories they enable.
    socket: ringtraced's producer socket (None: the default the C++ SDK
    resolves); name: the producer name the service shows (None: the
    program's); wait_ms: wait this long for the first connection to
    ringtraced (is_connected()).
    """
    options = _InitOptions()
    _check(_lib.ringtrace_init_options_set_defaults(
        ctypes.byref(options), ctypes.sizeof(_InitOptions), ABI_VERSION))
    options.backends = int(backends)
    options.wait_for_connection_ms = int(wait_ms)
    if socket is not None:
        options.producer_socket_path = os.fsencode(socket)
    if name is not None:
        options.producer_name = _encode(name, "a producer name")
    _check(_lib.ringtrace_init(ctypes.byref(options)))


def is_connected():
    """Whether every backend init() chose is connected."""
    return _lib.ringtrace_is_connected() == 1


class Session:
    """A tracing session (the C API's ringtrace_session_*).

    config: a TraceConfig in Perfetto's text format; backend:
    BACKEND_IN_PROCESS (this process, no daemon; init() must have started
    it) or BACKEND_SYSTEM (ringtraced's consumer socket, |consumer_socket|
    or the default); output: a path the trace is written to (None: into
    memory, read_trace() after stop()). A context manager: the session is
    stopped (its trace written) and freed at the end of the block.
    """

    def __init__(self, config, backend=BACKEND_IN_PROCESS, output=None,
                 consumer_socket=None, timeout_ms=0):
        self._handle = None
        options = _SessionOptions()
        _check(_lib.ringtrace_session_options_set_defaults(
            ctypes.byref(options), ctypes.sizeof(_SessionOptions),
            ABI_VERSION))
        options.backend = int(backend)
        options.timeout_ms = int(timeout_ms)
        if consumer_socket is not None:
            options.consumer_socket_path = os.fsencode(consumer_socket)
        fd = -1
        if output is not None:
            fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC |
                         os.O_CLOEXEC, 0o600)
        handle = ctypes.c_void_p()
        try:
            _check(_lib.ringtrace_session_new(
                ctypes.byref(options), config.encode("utf-8"), fd,
                ctypes.byref(handle)))
        finally:
            if fd >= 0:
                os.close(fd)  # the library keeps its own copy
        self._handle = handle.value

    def _live(self):
        if self._handle is None:
            raise Error(ERR_INVALID_ARGUMENT, "the session was closed")
        return self._handle

    def start(self):
        """Starts it; in-process, the enabled categories are on at return."""
        _check(_lib.ringtrace_session_start(self._live()))

    def flush(self, timeout_ms=0):
        _check(_lib.ringtrace_session_flush(self._live(), int(timeout_ms)))

    def stop(self):
        """Stops it and waits until its trace is written."""
        _check(_lib.ringtrace_session_stop(self._live()))

    def read_trace(self):
        """The trace file's bytes, after stop() (a session into memory)."""
        size = ctypes.c_size_t()
        _check(_lib.ringtrace_session_read_trace(self._live(), None, 0,
                                                 ctypes.byref(size)))
        buffer = ctypes.create_string_buffer(size.value)
        _check(_lib.ringtrace_session_read_trace(
            self._live(), buffer, size.value, ctypes.byref(size)))
        return buffer.raw[:size.value]

    def summary(self):
        """(packets written, packets lost), after stop()."""
        written = ctypes.c_uint64()
        lost = ctypes.c_uint64()
        _check(_lib.ringtrace_session_summary(
            self._live(), ctypes.byref(written), ctypes.byref(lost)))
        return written.value, lost.value

    def close(self):
        """Stops it if it runs (the trace is written) and frees it."""
        if self._handle is not None:
            _lib.ringtrace_session_destroy(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        self.close()
        return False

    def __del__(self):
        self.close()


def flush():
    """Publishes the calling thread's finished events to the service."""
    _check(_lib.ringtrace_flush())


def shutdown():
    """Flushes this thread and disconnects; init() may be called again."""
    _check(_lib.ringtrace_shutdown())


def _args(args):
    """The C array for the keyword arguments |args| (and the references
    that keep its strings alive)."""
    n = len(args)
    if n > _MAX_ARGS:
        raise ValueError("ringtrace: at most %d arguments" % _MAX_ARGS)
    array = (_Arg * n)()
    for slot, (key, value) in zip(array, args.items()):
        slot.name = key.encode("utf-8")
        if isinstance(value, bool):
            slot.type = _ARG_BOOL
            slot.value.bool_value = 1 if value else 0
        elif isinstance(value, int) and _INT64_MIN <= value < _INT64_LIMIT:
            slot.type = _ARG_INT64
            slot.value.int64_value = value
        elif isinstance(value, int) and 0 <= value < _UINT64_LIMIT:
            slot.type = _ARG_UINT64
            slot.value.uint64_value = value
        elif isinstance(value, float):
            slot.type = _ARG_DOUBLE
            slot.value.double_value = value
        else:
            slot.type = _ARG_STRING
            slot.value.string_value = str(value).encode("utf-8", "replace")
    return array


class _Slice:
    __slots__ = ("_category", "_name", "_args", "_begun")

    def __init__(self, category, name, args):
        self._category = category
        self._name = name
        self._args = args
        self._begun = False

    def __enter__(self):
        category = self._category
        if category._mask.value:
            args = self._args
            if args:
                _check(_lib.ringtrace_slice_begin(
                    category._handle, self._name, 0, _args(args), len(args)))
            else:
                _check(_lib.ringtrace_slice_begin(category._handle,
                                                  self._name, 0, None, 0))
            self._begun = True
        return self

    def __exit__(self, exc_type, exc, traceback):
        if self._begun:
            self._begun = False
            _lib.ringtrace_slice_end(self._category._handle)
        return False


class _DisabledSlice:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        return False


_DISABLED_SLICE = _DisabledSlice()


def slice(category, name, **args):  # noqa: A001 (the API's name)
    """A context manager: a slice |name| for the duration of the block.

        with ringtrace.slice("app", "load", path=path):
            ...

    The end is written only where the begin was (a session that starts
    inside the block gets neither). A disabled category's block costs the
    mask read and a shared no-op context manager.
    """
    category = _category(category)
    if not category._mask.value:
        return _DISABLED_SLICE
    return _Slice(category, _encode(name, "an event name"), args)


def instant(category, name, **args):
    """A zero-duration event |name| on the calling thread's track."""
    category = _category(category)
    if not category._mask.value:
        return
    name = _encode(name, "an event name")
    if args:
        _check(_lib.ringtrace_instant(category._handle, name, 0, _args(args),
                                      len(args)))
    else:
        _check(_lib.ringtrace_instant(category._handle, name, 0, None, 0))


def counter(category, name, value):
    """A value on the process's counter track |name|: an int (int64) or a
    float (double)."""
    category = _category(category)
    if not category._mask.value:
        return
    name = _encode(name, "a counter name")
    if isinstance(value, float):
        _check(_lib.ringtrace_counter_double(category._handle, name, 0,
                                             value))
    elif isinstance(value, int):
        if not _INT64_MIN <= value < _INT64_LIMIT:
            raise ValueError("ringtrace: counter %r: %d is out of int64 range"
                             % (name, value))
        _check(_lib.ringtrace_counter_int64(category._handle, name, 0,
                                            int(value)))
    else:
        raise TypeError("ringtrace: a counter value is an int or a float, not "
                        + type(value).__name__)


def traced(category, name=None):
    """A decorator: each call of the function is a slice (named |name|, or
    the function's __qualname__)."""

    def decorate(function):
        slice_name = _encode(name or function.__qualname__, "an event name")

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with _Slice(_category(category), slice_name, None):
                return function(*args, **kwargs)

        return wrapper

    return decorate
