/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Fuzzes the page parser and the translator with arbitrary pages. Input:
// byte 0 picks the header layout (bit 0: a 32-bit kernel's 4-byte commit)
// and the form (bit 1: compact_sched), the rest is the page (any size). Besides
// "no crash, no out-of-bounds read, no hang" (sanitizers, libFuzzer's timeout),
// it checks:
//  - every record lies inside the page and the parse takes at most
//    size / 4 events;
//  - the translator sees the same page the same way: a header error or an
//    event error is one corrupt page, and it writes no more events (full
//    and compact together) than the parser found.

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <vector>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "src/traced_probes/ftrace/event_translator.h"
#include "src/traced_probes/ftrace/page_parser.h"
#include "src/traced_probes/ftrace/test/format_texts.h"
#include "src/traced_probes/ftrace/test/page_builder.h"
#include "src/tracing/core/encoding/test/bench_writer.h"

namespace ringtrace {
namespace ftrace {
namespace {

namespace rt = perfetto::protos::rtzero;

const EventFormatTable& Formats() {
  static EventFormatTable* table = [] {
    auto* t = new EventFormatTable;
    struct Text {
      const char* text;
      const char* group;
    };
    for (const Text& f : {Text{test::kSchedSwitchFormat, "sched"},
                          Text{test::kSchedWakingFormat, "sched"},
                          Text{test::kSchedProcessForkFormat, "sched"},
                          Text{test::kPrintFormat, "ftrace"},
                          Text{test::kIrqHandlerEntryFormat, "irq"}}) {
      RT_CHECK(t->Add(test::ParseFormatOrDie(f.text, f.group)).ok());
    }
    return t;
  }();
  return *table;
}

void FuzzOne(const uint8_t* data, size_t size) {
  if (size < 1)
    return;
  HeaderPage layout;
  if (data[0] & 1) {
    layout.commit_size = 4;
    layout.data_offset = 12;
  }
  // A copy of exactly the page's size, so that ASan sees every overread.
  const std::vector<uint8_t> page(data + 1, data + size);
  const size_t page_size = page.size();
  const uint8_t* p = page.data();

  size_t parsed = 0;
  bool corrupt = false;
  PageHeader header;
  const PageError header_error = ParsePageHeader(p, page_size, layout, &header);
  if (header_error != PageError::kNone) {
    corrupt = true;
  } else {
    RT_CHECK(layout.data_offset + header.data_length <= page_size);
    if (header.lost_count_stored)
      RT_CHECK(header.lost_events);
    PageEventIterator it(p, layout, header);
    RawEvent e;
    while (it.Next(&e)) {
      RT_CHECK(e.data >= p + layout.data_offset);
      RT_CHECK(e.data + e.size <= p + layout.data_offset + header.data_length);
      RT_CHECK(e.size > 0);
      parsed++;
      RT_CHECK(parsed <= header.data_length / 4);
    }
    RT_CHECK(!it.Next(&e));  // stays ended
    corrupt = it.error() != PageError::kNone;
  }

  static encoding::BenchWriter* const bench = new encoding::BenchWriter();
  EventTranslator translator(&Formats(), layout);
  translator.SetCompactSched((data[0] & 2) != 0);
  BundleResult r;
  {
    auto handle = bench->writer->NewTracePacket();
    rt::TracePacket packet(handle);
    rt::FtraceEventBundle bundle = packet.set_ftrace_events();
    r = translator.WriteBundle(0, p, 1, page_size, &bundle);
  }
  RT_CHECK(r.pages == 1);
  RT_CHECK(r.corrupt_pages == (corrupt ? 1u : 0u));
  RT_CHECK(r.events + r.compact_events <= parsed);
  const TranslatorStats& t = translator.stats();
  RT_CHECK(t.events + t.compact_switches + t.compact_wakings +
               t.unknown_events + t.short_records ==
           parsed);
  RT_CHECK(t.compact_switches + t.compact_wakings == r.compact_events);
}

}  // namespace
}  // namespace ftrace
}  // namespace ringtrace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ringtrace::ftrace::FuzzOne(data, size);
  return 0;
}
