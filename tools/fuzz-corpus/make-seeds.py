#!/usr/bin/env python3
# Copyright (C) 2026 The ringtrace authors.
#
# Writes the hand-made seed inputs of every fuzzer into
# tools/fuzz-corpus/<fuzzer>/. Each seed is a small, valid or nearly valid
# input that reaches a branch a random start would take long to find. The
# files are checked in; rerun this only to change the hand-made seeds
# (tools/fuzz --merge-seeds adds the inputs found by runs beside them).
import os
import struct

ROOT = os.path.dirname(os.path.abspath(__file__))


def write(fuzzer, name, data):
    d = os.path.join(ROOT, fuzzer)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire_type):
    return varint(field << 3 | wire_type)


# ungrouper_fuzzer: one TracePacket as the encoder writes it.
plain = tag(8, 0) + varint(12345) + tag(10, 2) + varint(3) + b"abc"
write("ungrouper_fuzzer", "plain_fields", plain)
group = tag(11, 3) + tag(1, 0) + varint(7) + tag(2, 2) + varint(2) + b"hi" + tag(11, 4)
write("ungrouper_fuzzer", "one_group", tag(8, 0) + varint(1) + group)
nested = (tag(11, 3) + tag(4, 3) + tag(1, 5) + b"\x01\x02\x03\x04" +
          tag(4, 4) + tag(2, 1) + b"\x00" * 8 + tag(11, 4))
write("ungrouper_fuzzer", "nested_groups", nested)
write("ungrouper_fuzzer", "unterminated_group", tag(11, 3) + tag(1, 0) + b"\x80")

# wire_protocol_fuzzer: every message (header: magic, type, size).
def message(msg_type, payload):
    return struct.pack("<III", 0x50495452, msg_type, len(payload)) + payload


name = b"seed_app"
write("wire_protocol_fuzzer", "hello",
      message(1, struct.pack("<IIII", 1, 0, 0, len(name)) + name))
write("wire_protocol_fuzzer", "hello_reply",
      message(2, struct.pack("<IIIII", 0, 7, 4096, 16, 0)))
write("wire_protocol_fuzzer", "drain_request", message(3, b""))
write("wire_protocol_fuzzer", "bad_magic",
      struct.pack("<III", 0x11223344, 3, 0))


def sized(text):
    return struct.pack("<I", len(text)) + text


write("wire_protocol_fuzzer", "register_data_source",
      message(4, sized(b"track_event")))
write("wire_protocol_fuzzer", "start_data_source",
      message(5, struct.pack("<III", 1, 3, 5000) + sized(b"track_event") +
              struct.pack("<IIII", 2, 1, 1, 1) + sized(b"cat*") +
              sized(b"gfx") + sized(b"*") + sized(b"slow") + sized(b"debug") +
              sized(b"\x0a\x02ds")))
write("wire_protocol_fuzzer", "start_data_source_no_categories",
      message(5, struct.pack("<III", 0xffffffff, 0xffff, 0) + sized(b"ds") +
              struct.pack("<IIII", 0, 0, 0, 0) + sized(b"")))
write("wire_protocol_fuzzer", "data_source_categories",
      message(10, sized(b"track_event") + struct.pack("<I", 2) +
              sized(b"gfx") + sized(b"Frames") + struct.pack("<I", 0) +
              sized(b"gfx.debug") + sized(b"") + struct.pack("<I", 2) +
              sized(b"debug") + sized(b"slow")))
write("wire_protocol_fuzzer", "stop_data_source", message(6, struct.pack("<I", 1)))
write("wire_protocol_fuzzer", "data_source_stopped",
      message(7, struct.pack("<I", 1)))
write("wire_protocol_fuzzer", "flush", message(8, struct.pack("<I", 0)))
write("wire_protocol_fuzzer", "flush_ack", message(9, struct.pack("<I", 7)))

# ring_reader_fuzzer: byte 0 geometry (chunk size index | num_chunks index
# << 2), bytes 1-4 start position, byte 5 head policy, then the bytes that
# fill the mapping cyclically (cursors, state words, payload).
def ring(geometry, start, policy, fill):
    return bytes([geometry]) + struct.pack("<I", start) + bytes([policy]) + fill


write("ring_reader_fuzzer", "empty_ring", ring(0, 0, 0, b""))
# A 256-byte pattern: every state word reads Complete(w=1, n=1) with one
# 1-byte fragment whose size entry sits at the end of the chunk.
complete = struct.pack("<I", (2 << 29) | (1 << 16) | 1)
write("ring_reader_fuzzer", "complete_chunks",
      ring(0, 0, 0, complete + b"\x00\x00" + b"\x2a" + b"\x00" * 248 + b"\x01"))
acquired = struct.pack("<I", (1 << 29) | (1 << 16) | 2)
write("ring_reader_fuzzer", "acquired_deferred",
      ring(0, 0, 1, acquired + b"\x00\x00" + b"\x2a" + b"\x00" * 248 + b"\x01"))
write("ring_reader_fuzzer", "reserved_state",
      ring(5, 0xfffffff0, 0, struct.pack("<I", 5 << 29)))

# trace_buffer_v2_fuzzer: mode byte, then ops (op, producer, writer,
# chunk id byte, op arguments).
def copy_chunk(chunk_id, num_frags, flags, payload):
    return (bytes([0, 1, 1, chunk_id, num_frags, flags]) +
            struct.pack("<H", len(payload)) + payload)


def read(n):
    return bytes([3, 0, 0, 0, n])


pkt = varint(5) + b"hello"
write("trace_buffer_v2_fuzzer", "copy_then_read",
      bytes([0]) + copy_chunk(0, 1, 0, pkt) + copy_chunk(1, 1, 0, pkt) + read(10))
frag_a = varint(4) + b"abcd"
write("trace_buffer_v2_fuzzer", "fragmented_packet",
      bytes([0]) + copy_chunk(0, 1, 2, frag_a) + copy_chunk(1, 1, 1, frag_a) +
      read(10))
write("trace_buffer_v2_fuzzer", "out_of_order_clone",
      bytes([8]) + copy_chunk(2, 1, 0, pkt) + copy_chunk(1, 1, 0, pkt) +
      copy_chunk(0, 1, 0, pkt) + bytes([4, 0, 0, 0]) + read(255))
big = varint(200) + b"x" * 200
write("trace_buffer_v2_fuzzer", "overwrite_small_buffer",
      bytes([0]) + b"".join(copy_chunk(i, 1, 0, big) for i in range(40)) +
      read(255))

# consumer_protocol_fuzzer: consumer protocol datagrams (header: magic "RTCP",
# type 1 request / 2 response, payload size) around ConsumerRequest and
# ConsumerResponse protobufs (protos/ringtrace/ipc/consumer_port.proto).
def ld(field, payload):
    return tag(field, 2) + varint(len(payload)) + payload


def vi(field, value):
    return tag(field, 0) + varint(value)


def consumer(msg_type, payload):
    return struct.pack("<III", 0x50435452, msg_type, len(payload)) + payload


track_event = ld(113, ld(2, b"*") + ld(1, b"debug.*"))
data_source = ld(1, ld(1, b"track_event") + vi(2, 1) + track_event) + ld(2, b"app")
config = (ld(1, vi(1, 1024) + vi(4, 1)) + ld(1, vi(1, 64) + vi(4, 2)) +
          ld(2, data_source) + vi(3, 10000) + vi(8, 1) + vi(9, 1000) +
          vi(10, 1 << 20) + ld(22, b"seed_session"))
write("consumer_protocol_fuzzer", "enable_tracing",
      consumer(1, vi(1, 1) + ld(2, ld(1, config))))
write("consumer_protocol_fuzzer", "flush",
      consumer(1, vi(1, 2) + ld(4, vi(1, 7) + vi(2, 500))))
write("consumer_protocol_fuzzer", "query_service_state",
      consumer(1, vi(1, 3) + ld(7, b"")))
write("consumer_protocol_fuzzer", "detach",
      consumer(1, vi(1, 3) + ld(8, vi(1, 7) + ld(2, b"nightly"))))
write("consumer_protocol_fuzzer", "attach",
      consumer(1, vi(1, 4) + ld(9, ld(1, b"nightly") + vi(2, 1))))
summary = vi(1, 7) + vi(2, 100) + vi(3, 4096) + vi(4, 2) + vi(5, 10000)
write("consumer_protocol_fuzzer", "disable_response",
      consumer(2, vi(1, 1) + vi(2, 1) + vi(4, 7) + ld(7, summary)))
write("consumer_protocol_fuzzer", "tracing_ended",
      consumer(2, vi(2, 0) + ld(3, b"write: No space left on device") + vi(4, 7) +
               ld(7, summary) + vi(8, 1)))
state = (ld(1, vi(1, 1) + ld(2, b"app") + vi(3, 42) + vi(4, 1000) +
               ld(5, b"track_event") + vi(6, 1 << 20)) +
         ld(2, vi(1, 7) + ld(2, b"s") + ld(4, b"started") +
               ld(5, vi(1, 1) + vi(2, 1 << 20) + vi(3, 4096) + vi(4, 1))) +
         vi(3, 8))
write("consumer_protocol_fuzzer", "service_state",
      consumer(2, vi(1, 3) + vi(2, 1) + ld(6, state)))

# page_parser_fuzzer: byte 0 the header layout (bit 0: 4-byte commit of a
# 32-bit kernel) and the form (bit 1: compact_sched), then one ring buffer
# page as trace_pipe_raw returns it:
# u64 time stamp, commit (data length | bit 31 lost | bit 30 count stored),
# events (u32 header: type_len in the low 5 bits, time delta above).
# A 64-bit kernel sign-extends bit 31 into the upper half of the commit
# (it adds RB_MISSED_EVENTS, the int 1 << 31, to a long).
def rb_page(data, ts=1000, lost=False, stored=None, commit_size=8, size=None):
    commit = len(data)
    if stored is not None:
        commit |= 1 << 30
    if lost:
        commit |= (0xffffffff80000000 if commit_size == 8 else 1 << 31)
    head = struct.pack("<Q", ts) + struct.pack(
        "<Q" if commit_size == 8 else "<I", commit)
    body = head + data
    if stored is not None:
        body += struct.pack("<Q" if commit_size == 8 else "<I", stored)
    if size is not None:
        body += b"\x00" * (size - len(body))
    return body


def rb_event(delta, record, length_word=False):
    record += b"\x00" * (-len(record) % 4)
    if not length_word and len(record) <= 112:
        return struct.pack("<I", len(record) // 4 | delta << 5) + record
    return struct.pack("<II", delta << 5, len(record) + 4) + record


def comm(name):
    return name + b"\x00" * (16 - len(name))


def sched_switch(pid, prev, nxt, next_pid):
    # common_type 372, flags, preempt count, common_pid; then the fields at
    # the offsets of this kernel's events/sched/sched_switch/format.
    return (struct.pack("<HBBi", 372, 0, 0, pid) + comm(prev) +
            struct.pack("<iiq", pid, 120, 1) + comm(nxt) +
            struct.pack("<ii", next_pid, 120))


def sched_waking(pid, name, target_cpu, flags=1):
    # common_type 375 (this kernel's sched_waking: comm, pid, prio,
    # target_cpu).
    return (struct.pack("<HBBi", 375, flags, 0, 1) + comm(name) +
            struct.pack("<iii", pid, 120, target_cpu))


def print_event(pid, text):
    return struct.pack("<HBBiQ", 5, 0, 0, pid, 0xffffffff81000000) + text + b"\x00"


def fork_event(parent, child):
    fixed = 24
    loc_p = fixed | (len(parent) + 1) << 16
    loc_c = fixed + len(parent) + 1 | (len(child) + 1) << 16
    return (struct.pack("<HBBiIiIi", 366, 0, 0, 10, loc_p, 10, loc_c, 11) +
            parent + b"\x00" + child + b"\x00")


write("page_parser_fuzzer", "sched_switch_page",
      bytes([0]) + rb_page(
          rb_event(5, sched_switch(100, b"app", b"swapper/0", 0)) +
          rb_event(700, sched_switch(0, b"swapper/0", b"app", 100)) +
          rb_event(3, sched_switch(100, b"app", b"kworker/0:1", 42))))
write("page_parser_fuzzer", "compact_sched_page",
      bytes([2]) + rb_page(
          rb_event(5, sched_waking(100, b"app", 0)) +
          rb_event(9, sched_switch(0, b"swapper/0", b"app", 100)) +
          rb_event(40, sched_switch(100, b"app", b"kworker/0:1", 42)) +
          rb_event(1, print_event(42, b"B|42|work\n")) +
          rb_event(3, sched_waking(7, b"app", 1, flags=0)) +
          rb_event(8, sched_switch(42, b"kworker/0:1", b"app", 100))))
write("page_parser_fuzzer", "lost_with_count",
      bytes([0]) + rb_page(rb_event(1, print_event(7, b"marker\n")),
                           lost=True, stored=1234))
write("page_parser_fuzzer", "lost_without_count",
      bytes([0]) + rb_page(rb_event(1, print_event(7, b"x\n")), lost=True))
time_ops = (struct.pack("<II", 30 | (5 << 5), 3) +        # time extend
            rb_event(0, fork_event(b"bash", b"ls"), length_word=True) +
            struct.pack("<II", 29 | (1 << 5), 12) + b"\x00" * 8 +  # padding
            struct.pack("<II", 31 | (9 << 5), 77) +       # absolute stamp
            rb_event(2, struct.pack("<HBBiiI", 225, 0, 0, 0, 30, 16 | 5 << 16) +
                     b"eth0\x00") +
            struct.pack("<I", 29))                         # rest is padding
write("page_parser_fuzzer", "time_extend_stamp_padding",
      bytes([0]) + rb_page(time_ops))
write("page_parser_fuzzer", "kernel32",
      bytes([1]) + rb_page(rb_event(4, print_event(1, b"32-bit\n")),
                           lost=True, stored=2, commit_size=4))
write("page_parser_fuzzer", "full_page",
      bytes([0]) + rb_page(
          b"".join(rb_event(i % 50, sched_switch(i, b"a", b"b", i + 1))
                   for i in range(59)), size=4096))

# proc_parsers_fuzzer: one sample of each /proc file the probes parse (every
# parser reads every input), and the hostile shapes of the unit tests.
write("proc_parsers_fuzzer", "status",
      b"Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
      b"Pid:\t4242\nPPid:\t4000\nUid:\t1000\t1000\t1000\t1000\n"
      b"VmSize:\t    9000 kB\nVmLck:\t       4 kB\nVmHWM:\t    5000 kB\n"
      b"VmRSS:\t    4800 kB\nRssAnon:\t    1800 kB\nRssFile:\t    2900 kB\n"
      b"RssShmem:\t     100 kB\nVmSwap:\t      12 kB\nThreads:\t1\n")
write("proc_parsers_fuzzer", "status_cut", b"Name:\tx\nPid:\t7\nVmRSS:\t 12")
write("proc_parsers_fuzzer", "pid_stat",
      b"77 (a) S 1 2 3 (x) ) R 9 9 9 9 9 9 9 9 9 9 11 12 0 0 20 0 1 0 999 0 0\n")
write("proc_parsers_fuzzer", "cmdline", b"/usr/bin/app\0--flag\0\0x\0")
write("proc_parsers_fuzzer", "oom_score_adj", b"-1000\n")
write("proc_parsers_fuzzer", "meminfo",
      b"MemTotal:       16303592 kB\nMemFree:         1234567 kB\n"
      b"Active(anon):      98765 kB\nHugePages_Total:       0\n")
write("proc_parsers_fuzzer", "vmstat",
      b"nr_free_pages 408149\npgfault 12345678901\nnr_dirty -3\n")
write("proc_parsers_fuzzer", "stat",
      b"cpu  1000 20 300 40000 50 6 7 8 0 0\n"
      b"cpu0 500 10 150 20000 25 3 4 5 0 0\ncpu1 1 2 3 4\n"
      b"intr 1000 0 900 0 0 100\nctxt 987654\nbtime 1700000000\n"
      b"processes 4321\nsoftirq 600 0 500 0 100 0 0 0 0 0 0\n")
