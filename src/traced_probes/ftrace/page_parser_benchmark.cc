/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Raw ring buffer pages of sched_switch events, as the kernel writes them
// (64-byte records, 59 per 4 KiB page), parsed and translated. Bytes
// processed are the page bytes; BM_FtracePages_Memcpy copies the same
// bytes in the same binary, the floor of any pass over them.
//
//   BM_FtracePages_Parse      page headers + event walk (timestamps, records)
//   BM_FtracePages_Translate  the same plus FtraceEvent/SchedSwitch encoding
//                             through the typed writers into a TraceWriterV2
//                             ring (chunk turnover included), one bundle per
//                             batch, as the producer will do
//   BM_FtracePages_TranslateCompact  Translate with compact_sched: the
//                             switches as packed columns with interned comms
//   BM_FtracePages_EncodeOnly the encoding alone: the same events from
//                             values decoded before the loop
//   BM_FtracePages_Memcpy     memcpy of the batch
//
// Counters: per_1000_events, the CPU time per 1,000 sched_switch events
// (what the drain of ringtrace_probes costs per 1,000 events: parse and
// encode, beside the memcpy of the same pages); encoded_bytes_per_event,
// the bytes written to the ring per sched_switch (full or compact).

#include <benchmark/benchmark.h>

#include <string.h>

#include <string>
#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "src/traced_probes/ftrace/event_translator.h"
#include "src/traced_probes/ftrace/page_parser.h"
#include "src/traced_probes/ftrace/test/format_texts.h"
#include "src/traced_probes/ftrace/test/page_builder.h"
#include "src/tracing/core/encoding/test/bench_writer.h"

namespace ringtrace {
namespace ftrace {
namespace {

namespace rt = perfetto::protos::rtzero;

constexpr size_t kPageSize = 4096;
constexpr size_t kPages = 16;  // one read batch: 64 KiB

struct Batch {
  EventFormatTable formats;
  std::vector<uint8_t> bytes;
  size_t events = 0;
};

const Batch& SchedSwitchBatch() {
  static Batch* batch = [] {
    Batch* b = new Batch;
    const EventFormat format =
        test::ParseFormatOrDie(test::kSchedSwitchFormat, "sched");
    static const char* const kComms[] = {"surfaceflinger", "kworker/1:2",
                                         "swapper/1", "RenderThread",
                                         "binder:1234_5"};
    uint32_t n = 0;
    for (size_t p = 0; p < kPages; p++) {
      test::PageBuilder page(kPageSize);
      page.SetTimestamp(1000000000ull + p * 1000000);
      for (;;) {
        const auto record = test::RecordBuilder(format)
                                .SetInt("common_pid", 1000 + n % 97)
                                .SetString("prev_comm", kComms[n % 5])
                                .SetInt("prev_pid", 1000 + n % 97)
                                .SetInt("prev_prio", 120)
                                .SetInt("prev_state", n % 3 == 0 ? 1 : 0)
                                .SetString("next_comm", kComms[(n + 2) % 5])
                                .SetInt("next_pid", 2000 + n % 89)
                                .SetInt("next_prio", 100 + n % 20)
                                .Build();
        if (!page.Fits(record.size() + 4))
          break;
        page.AddEvent(1000 + n % 5000, record);
        n++;
        b->events++;
      }
      const std::vector<uint8_t> bytes = page.Build();
      b->bytes.insert(b->bytes.end(), bytes.begin(), bytes.end());
    }
    base::Status s = b->formats.Add(format);
    RT_CHECK(s.ok());
    return b;
  }();
  return *batch;
}

void SetCounters(benchmark::State& state, const Batch& batch) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(batch.bytes.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(batch.events));
  // Thousands of events per iteration, as a rate over the CPU time,
  // inverted: seconds of CPU per 1,000 events.
  state.counters["per_1000_events"] =
      benchmark::Counter(static_cast<double>(batch.events) / 1000.0,
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

void BM_FtracePages_Parse(benchmark::State& state) {
  const Batch& batch = SchedSwitchBatch();
  const HeaderPage layout;
  size_t events = 0;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (size_t p = 0; p < kPages; p++) {
      const uint8_t* page = batch.bytes.data() + p * kPageSize;
      PageHeader header;
      if (ParsePageHeader(page, kPageSize, layout, &header) !=
          PageError::kNone) {
        state.SkipWithError("bad page");
        return;
      }
      PageEventIterator it(page, layout, header);
      RawEvent e;
      while (it.Next(&e)) {
        sum += e.timestamp + e.data[8];
        events++;
      }
    }
    benchmark::DoNotOptimize(sum);
  }
  if (events != batch.events * static_cast<size_t>(state.iterations()))
    state.SkipWithError("events missed");
  SetCounters(state, batch);
}
BENCHMARK(BM_FtracePages_Parse);

void BM_FtracePages_Translate(benchmark::State& state) {
  const Batch& batch = SchedSwitchBatch();
  EventTranslator translator(&batch.formats, HeaderPage());
  encoding::BenchWriter bench;
  for (auto _ : state) {
    auto handle = bench.writer->NewTracePacket();
    rt::TracePacket packet(handle);
    rt::FtraceEventBundle bundle = packet.set_ftrace_events();
    const BundleResult r = translator.WriteBundle(1, batch.bytes.data(), kPages,
                                                  kPageSize, &bundle);
    benchmark::DoNotOptimize(r.events);
  }
  bench.writer->Flush();
  if (bench.writer->stats().packets_dropped != 0)
    state.SkipWithError("packets lost");
  if (translator.stats().events !=
      batch.events * static_cast<uint64_t>(state.iterations()))
    state.SkipWithError("events missed");
  SetCounters(state, batch);
  state.counters["encoded_bytes_per_event"] =
      static_cast<double>(bench.writer->stats().bytes_written) /
      static_cast<double>(translator.stats().events);
}
BENCHMARK(BM_FtracePages_Translate);

// Translate with compact_sched on: the same pages, the switches written as
// Perfetto's CompactSched columns.
void BM_FtracePages_TranslateCompact(benchmark::State& state) {
  const Batch& batch = SchedSwitchBatch();
  EventTranslator translator(&batch.formats, HeaderPage());
  translator.SetCompactSched(true);
  if (!translator.compact_switch()) {
    state.SkipWithError("the format has no compact form");
    return;
  }
  encoding::BenchWriter bench;
  for (auto _ : state) {
    auto handle = bench.writer->NewTracePacket();
    rt::TracePacket packet(handle);
    rt::FtraceEventBundle bundle = packet.set_ftrace_events();
    const BundleResult r = translator.WriteBundle(1, batch.bytes.data(), kPages,
                                                  kPageSize, &bundle);
    benchmark::DoNotOptimize(r.compact_events);
  }
  bench.writer->Flush();
  if (bench.writer->stats().packets_dropped != 0)
    state.SkipWithError("packets lost");
  if (translator.stats().compact_switches !=
      batch.events * static_cast<uint64_t>(state.iterations()))
    state.SkipWithError("events missed");
  SetCounters(state, batch);
  state.counters["encoded_bytes_per_event"] =
      static_cast<double>(bench.writer->stats().bytes_written) /
      static_cast<double>(translator.stats().compact_switches);
}
BENCHMARK(BM_FtracePages_TranslateCompact);

// The encoding alone: the same FtraceEvents (values decoded once, before
// the loop) written through the same typed writers into the same kind of
// ring, one bundle per batch. Translate minus this is the decoding's cost.
void BM_FtracePages_EncodeOnly(benchmark::State& state) {
  const Batch& batch = SchedSwitchBatch();
  struct Decoded {
    uint64_t ts;
    uint32_t pid;
    std::string prev_comm, next_comm;
    int32_t prev_pid, prev_prio, next_pid, next_prio;
    int64_t prev_state;
  };
  std::vector<Decoded> events;
  const EventFormat& f = *batch.formats.formats()[0];
  auto i32 = [](const RawEvent& e, const FormatField* field) {
    int32_t v;
    memcpy(&v, e.data + field->offset, 4);
    return v;
  };
  for (size_t p = 0; p < kPages; p++) {
    const uint8_t* page = batch.bytes.data() + p * kPageSize;
    PageHeader header;
    RT_CHECK(ParsePageHeader(page, kPageSize, HeaderPage(), &header) ==
             PageError::kNone);
    PageEventIterator it(page, HeaderPage(), header);
    RawEvent e;
    while (it.Next(&e)) {
      Decoded d;
      d.ts = e.timestamp;
      d.pid = static_cast<uint32_t>(i32(e, f.FindField("common_pid")));
      d.prev_comm = reinterpret_cast<const char*>(
          e.data + f.FindField("prev_comm")->offset);
      d.next_comm = reinterpret_cast<const char*>(
          e.data + f.FindField("next_comm")->offset);
      d.prev_pid = i32(e, f.FindField("prev_pid"));
      d.prev_prio = i32(e, f.FindField("prev_prio"));
      d.next_pid = i32(e, f.FindField("next_pid"));
      d.next_prio = i32(e, f.FindField("next_prio"));
      memcpy(&d.prev_state, e.data + f.FindField("prev_state")->offset, 8);
      events.push_back(d);
    }
  }
  encoding::BenchWriter bench;
  for (auto _ : state) {
    auto handle = bench.writer->NewTracePacket();
    rt::TracePacket packet(handle);
    rt::FtraceEventBundle bundle = packet.set_ftrace_events();
    bundle.set_cpu(1);
    for (const Decoded& d : events) {
      rt::FtraceEvent event = bundle.add_event();
      event.set_timestamp(d.ts);
      event.set_pid(d.pid);
      rt::SchedSwitchFtraceEvent sw = event.set_sched_switch();
      sw.set_prev_comm(d.prev_comm);
      sw.set_prev_pid(d.prev_pid);
      sw.set_prev_prio(d.prev_prio);
      sw.set_prev_state(d.prev_state);
      sw.set_next_comm(d.next_comm);
      sw.set_next_pid(d.next_pid);
      sw.set_next_prio(d.next_prio);
    }
  }
  bench.writer->Flush();
  if (bench.writer->stats().packets_dropped != 0)
    state.SkipWithError("packets lost");
  SetCounters(state, batch);
  state.counters["encoded_bytes_per_event"] =
      static_cast<double>(bench.writer->stats().bytes_written) /
      (static_cast<double>(events.size()) *
       static_cast<double>(state.iterations()));
}
BENCHMARK(BM_FtracePages_EncodeOnly);

void BM_FtracePages_Memcpy(benchmark::State& state) {
  const Batch& batch = SchedSwitchBatch();
  std::vector<uint8_t> dst(batch.bytes.size());
  for (auto _ : state) {
    memcpy(dst.data(), batch.bytes.data(), batch.bytes.size());
    benchmark::ClobberMemory();
    benchmark::DoNotOptimize(dst.data());
  }
  SetCounters(state, batch);
}
BENCHMARK(BM_FtracePages_Memcpy);

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace
