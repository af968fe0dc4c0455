# Copyright (C) 2026 The ringtrace authors.
"""record_session.py SOCKET: records into the ringtrace session that enables
the category "py" (the C API unit tests run it under one and check the
trace): 10 "step" slices with five argument types around a "decorated"
slice, 10 "tick" instants and 20 counter values. Exits 0 when it recorded.
"""

import sys
import time

import ringtrace


@ringtrace.traced("py")
def decorated():
    return 42


def main():
    socket = sys.argv[1]
    category = ringtrace.register_category("py", description="Python test")
    assert ringtrace.register_category("py") is category
    off = ringtrace.register_category("py.off", tags=["debug"])
    try:
        ringtrace.register_category("bad*")
        raise AssertionError("a '*' name was accepted")
    except ringtrace.Error as e:
        assert e.code == ringtrace.ERR_INVALID_ARGUMENT, e
    try:
        ringtrace.shutdown()
        raise AssertionError("shutdown before init succeeded")
    except ringtrace.Error as e:
        assert e.code == ringtrace.ERR_NOT_INITIALIZED, e

    ringtrace.init(socket=socket, name="py_record_session", wait_ms=60000)
    assert ringtrace.is_connected()
    deadline = time.monotonic() + 60
    while not category.enabled and time.monotonic() < deadline:
        time.sleep(0.001)
    assert ringtrace.is_enabled("py"), "no session enabled py"
    assert not off.enabled

    for i in range(10):
        with ringtrace.slice("py", "step", i=i, big=1 << 63, ratio=0.5,
                             flag=True, label="py"):
            assert decorated() == 42
        ringtrace.instant("py", "tick", i=i)
        ringtrace.instant(off, "never")
        ringtrace.counter("py", "count", i)
        ringtrace.counter(category, "fraction", i / 10)
    try:
        ringtrace.counter("py", "bad", "text")
        raise AssertionError("a str counter value was accepted")
    except TypeError:
        pass
    try:
        with ringtrace.slice("py", "raises"):
            raise KeyError("inside")
    except KeyError:
        pass  # the exception goes through; the slice ends
    ringtrace.flush()
    ringtrace.shutdown()
    print("record_session: recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
