# Copyright (C) 2026 The ringtrace authors.
"""record_in_process.py PATH: records this script into a session of the
in-process backend (no daemon) and writes the trace it reads back to PATH
(the C API unit tests decode it): 10 "step" slices and 10 counter values of
the category "py.inproc"; a category the session does not enable stays
off. Prints "record_in_process: N lost" and exits 0 when it recorded.
"""

import sys

import ringtrace

CONFIG = """
buffers { size_kb: 1024 }
data_sources {
  config {
    name: "track_event"
    track_event_config {
      disabled_categories: "*"
      enabled_categories: "py.inproc"
    }
  }
}
"""


def main():
    path = sys.argv[1]
    category = ringtrace.register_category("py.inproc")
    off = ringtrace.register_category("py.inproc.off")
    try:
        ringtrace.Session(CONFIG)
        raise AssertionError("an in-process session before init")
    except ringtrace.Error as e:
        assert e.code == ringtrace.ERR_NOT_INITIALIZED, e
    ringtrace.init(name="py_in_process",
                   backends=ringtrace.BACKEND_IN_PROCESS)
    assert ringtrace.is_connected()
    with ringtrace.Session(CONFIG) as session:
        session.start()
        assert category.enabled, "the start returned before the data source"
        assert not off.enabled
        for i in range(10):
            with ringtrace.slice(category, "step", i=i):
                ringtrace.counter(category, "count", i)
            ringtrace.instant(off, "off")
        session.stop()
        assert not category.enabled
        trace = session.read_trace()
        written, lost = session.summary()
    assert written > 20, written
    with open(path, "wb") as f:
        f.write(trace)
    ringtrace.shutdown()
    print("record_in_process: %d lost" % lost)
    return 0


if __name__ == "__main__":
    sys.exit(main())
