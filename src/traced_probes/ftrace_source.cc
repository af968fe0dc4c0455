/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace_source.h"

#include <inttypes.h>

#include <algorithm>
#include <set>
#include <utility>

#include "protos/perfetto/trace/trace_packet.rtzero.h"
#include "ringtrace/logging.h"
#include "src/base/time.h"

namespace ringtrace {
namespace probes {
namespace {

namespace rt = perfetto::protos::rtzero;

// The option that copies writes to the top-level trace_marker into an
// instance (Linux 6.17 and later).
constexpr char kCopyTraceMarker[] = "copy_trace_marker";
constexpr char kPrintEvent[] = "ftrace/print";

uint64_t Delta(uint64_t end, uint64_t start) {
  // The kernel's counters only grow; a smaller end (a counter reset by a
  // buffer resize) counts as 0 rather than wrapping.
  return end >= start ? end - start : 0;
}

}  // namespace

FtraceSource::FtraceSource(const FtraceOptions& options,
                           shm_ring::TraceWriterV2* writer)
    : options_(options), writer_(writer) {}

FtraceSource::~FtraceSource() {
  // The pipes first: the kernel refuses to remove an instance with an open
  // file (EBUSY). Then the instance (tracing_on 0, rmdir).
  cpus_.clear();
  instance_.reset();
}

base::Status FtraceSource::Create(const FtraceOptions& options,
                                  shm_ring::TraceWriterV2* writer,
                                  const std::string& tracefs_root,
                                  const std::string& prefix,
                                  std::unique_ptr<FtraceSource>* out,
                                  std::vector<std::string>* notes) {
  std::unique_ptr<FtraceSource> source(new FtraceSource(options, writer));
  base::Status s = source->SetUp(tracefs_root, prefix, notes);
  if (!s.ok())
    return s;  // ~FtraceSource removes what SetUp() made
  source->WriteStats(/*start=*/true);
  writer->Flush();
  *out = std::move(source);
  return base::OkStatus();
}

base::Status FtraceSource::SetUp(const std::string& tracefs_root,
                                 const std::string& prefix,
                                 std::vector<std::string>* notes) {
  uint32_t removed = 0;
  base::Status s = ftrace::CleanStaleInstances(tracefs_root, prefix, &removed);
  if (!s.ok())
    notes->push_back("stale tracefs instances: " + s.message());
  if (removed) {
    notes->push_back("removed " + std::to_string(removed) +
                     " tracefs instance(s) of " + prefix +
                     " processes that are gone");
  }
  s = ftrace::TracefsInstance::Create(tracefs_root, prefix, &instance_);
  if (!s.ok())
    return s;
  s = instance_->SetBufferSizeKb(options_.buffer_size_kb);
  if (!s.ok())
    return s;
  s = instance_->SetTraceClock("boot");
  if (!s.ok())
    return base::ErrStatus("%s (the trace's clock is CLOCK_BOOTTIME)",
                           s.message().c_str());
  s = ftrace::LoadHeaderPage(*instance_, &header_);
  if (!s.ok())
    return s;
  s = instance_->GetPageSize(&page_size_);
  if (!s.ok())
    return s;
  // A page is what one read returns; the kernel's sub-buffers are at most
  // 1 MiB, anything else is not a tracefs we understand.
  if (page_size_ < 64 || page_size_ > (1u << 20))
    return base::ErrStatus("tracefs: a page of %zu bytes", page_size_);
  uint32_t kb = 0;
  s = instance_->GetBufferSizeKb(&kb);
  if (!s.ok())
    return s;
  buffer_pages_ = static_cast<uint32_t>(
      std::min<uint64_t>(uint64_t{kb} * 1024 / page_size_ + 1, 1u << 20));

  EnableEvents(notes);
  if (enabled_.empty())
    notes->push_back(
        "no ftrace event enabled: this instance records only "
        "the kernel's counters");
  translator_ = std::make_unique<ftrace::EventTranslator>(&formats_, header_);
  translator_->SetCompactSched(options_.compact_sched);
  if (options_.compact_sched && !translator_->compact_switch() &&
      !translator_->compact_waking()) {
    notes->push_back(
        "compact_sched: neither sched/sched_switch nor sched/sched_waking is "
        "enabled, nothing to compact");
  }

  const bool print = std::find(enabled_.begin(), enabled_.end(), kPrintEvent) !=
                     enabled_.end();
  if (print && instance_->HasOption(kCopyTraceMarker)) {
    s = instance_->SetOption(kCopyTraceMarker, true);
    if (!s.ok())
      notes->push_back("ftrace/print: " + s.message());
  } else if (print) {
    notes->push_back(
        "ftrace/print: this kernel has no copy_trace_marker option (Linux "
        "6.17+): only writes to " +
        instance_->path() + "/trace_marker are recorded");
  }

  uint32_t cpus = 0;
  s = instance_->CountCpus(&cpus);
  if (!s.ok())
    return s;
  for (uint32_t cpu = 0; cpu < cpus; cpu++) {
    Cpu c;
    c.cpu = cpu;
    s = instance_->OpenTracePipeRaw(cpu, &c.pipe);
    if (!s.ok()) {
      // An offline CPU has no pipe; its events are not there to read.
      notes->push_back("cpu " + std::to_string(cpu) + ": " + s.message());
      continue;
    }
    cpus_.push_back(std::move(c));
  }
  if (cpus_.empty())
    return base::ErrStatus("tracefs instance %s: no CPU's trace_pipe_raw opens",
                           instance_->name().c_str());
  pages_.resize(kPagesPerBundle * page_size_);
  s = instance_->SetTracingOn(true);
  if (!s.ok())
    return s;
  drain_ = Schedule(options_.drain_period_ms, base::MonotonicMs());
  return base::OkStatus();
}

void FtraceSource::EnableEvents(std::vector<std::string>* notes) {
  // "group/*" expanded; each event once, in the order first named.
  std::vector<std::string> wanted;
  std::set<std::string> seen;
  auto want = [&](const std::string& event) {
    if (seen.insert(event).second)
      wanted.push_back(event);
  };
  for (const std::string& entry : options_.events) {
    const size_t slash = entry.find('/');
    if (slash != std::string::npos && entry.substr(slash + 1) == "*") {
      std::vector<std::string> group;
      base::Status s = instance_->ListGroupEvents(
          std::string_view(entry).substr(0, slash), &group);
      if (!s.ok()) {
        notes->push_back("ftrace_events \"" + entry + "\": ignored (" +
                         s.message() + ")");
        unknown_.push_back(entry);
        continue;
      }
      for (const std::string& event : group)
        want(event);
      continue;
    }
    want(entry);
  }
  for (const std::string& event : wanted) {
    std::string_view group;
    std::string_view name;
    std::string text;
    base::Status s;
    if (!ftrace::SplitEventName(event, &group, &name)) {
      s = base::ErrStatus("not group/name (each of [A-Za-z0-9_])");
    } else {
      s = instance_->ReadEventFormat(event, &text);
    }
    if (!s.ok()) {
      notes->push_back("ftrace_events \"" + event +
                       "\": not an event of this kernel, ignored (" +
                       s.message() + ")");
      unknown_.push_back(event);
      continue;
    }
    ftrace::EventFormat format;
    s = ftrace::ParseEventFormat(text, group, &format);
    if (s.ok())
      s = formats_.Add(std::move(format));
    if (s.ok())
      s = instance_->EnableEvent(event);
    if (!s.ok()) {
      notes->push_back("ftrace_events \"" + event +
                       "\": could not be enabled (" + s.message() + ")");
      failed_.push_back(event);
      continue;
    }
    enabled_.push_back(event);
  }
}

void FtraceSource::SetSeenPids(SeenPids* seen) {
  seen_ = seen;
  translator_->SetPidSink(seen ? &drained_tids_ : nullptr);
  translator_->SetRenameSink(seen ? &renamed_tids_ : nullptr);
}

void FtraceSource::OfferPids() {
  if (!seen_)
    return;
  if (!renamed_tids_.empty()) {
    seen_->OfferRenamed(renamed_tids_);
    renamed_tids_.clear();
  }
  if (drained_tids_.empty())
    return;
  new_tids_.clear();
  for (int32_t tid : drained_tids_) {
    if (offered_.size() >= kMaxOfferedTids)
      offered_.clear();
    if (offered_.insert(tid).second)
      new_tids_.push_back(tid);
  }
  drained_tids_.clear();
  if (!new_tids_.empty())
    seen_->Offer(new_tids_);
}

uint64_t FtraceSource::Run(uint64_t now_ms, const std::atomic<bool>& stop) {
  if (!drain_.Due(now_ms))
    return drain_.next_ms();
  Drain(buffer_pages_ + kPagesPerBundle, stop);
  writer_->Flush();
  drain_.Advance(base::MonotonicMs());
  counters_.drains_missed = drain_.missed();
  return drain_.next_ms();
}

void FtraceSource::Flush(const std::atomic<bool>& stop) {
  if (finished_)
    return;
  counters_.flush_drains++;
  Drain(buffer_pages_ + kPagesPerBundle, stop);
  writer_->Flush();
}

void FtraceSource::Drain(size_t max_pages, const std::atomic<bool>& stop) {
  counters_.drains++;
  // A drain of full buffers (the last one, or a burst) can write more than
  // the producer's ring holds: every few bundles the service is told to
  // take what is there (Flush() only signals it).
  constexpr uint32_t kBundlesPerFlush = 4;
  uint32_t since_flush = 0;
  for (Cpu& cpu : cpus_) {
    size_t left = max_pages;
    while (left > 0) {
      if (stop.load(std::memory_order_relaxed))
        return;
      const size_t want = std::min(left, kPagesPerBundle);
      size_t got = 0;
      base::Status s = ftrace::ReadRawPages(cpu.pipe.get(), page_size_, want,
                                            pages_.data(), &got);
      if (!s.ok()) {
        if (counters_.read_errors++ == 0)
          RT_ELOG("ftrace instance %s: cpu %u: %s (logged once)",
                  instance_->name().c_str(), cpu.cpu, s.message().c_str());
        // Pages read before the error are still written below.
      }
      if (got == 0)
        break;
      {
        auto handle = writer_->NewTracePacket();
        rt::TracePacket packet(handle);
        rt::FtraceEventBundle bundle = packet.set_ftrace_events();
        const ftrace::BundleResult result = translator_->WriteBundle(
            cpu.cpu, pages_.data(), got, page_size_, &bundle);
        counters_.bundles++;
        if (result.lost_events)
          counters_.bundles_lost++;
      }
      OfferPids();  // per bundle: the sink holds one bundle's tids at most
      if (++since_flush == kBundlesPerFlush) {
        writer_->Flush();
        since_flush = 0;
      }
      left -= got;
      if (got < want || !s.ok())
        break;  // this CPU's buffer is empty (or unreadable) for now
    }
  }
}

void FtraceSource::WriteStats(bool start) {
  auto handle = writer_->NewTracePacket();
  rt::TracePacket packet(handle);
  packet.set_timestamp(base::BootTimeNs());
  rt::FtraceStats stats = packet.set_ftrace_stats();
  stats.set_phase(start ? rt::FtraceStats::Phase::START_OF_TRACE
                        : rt::FtraceStats::Phase::END_OF_TRACE);
  for (Cpu& cpu : cpus_) {
    ftrace::CpuStats now;
    base::Status s = instance_->ReadCpuStats(cpu.cpu, &now);
    if (!s.ok()) {
      RT_ELOG("ftrace instance %s: %s", instance_->name().c_str(),
              s.message().c_str());
      continue;
    }
    rt::FtraceCpuStats out = stats.add_cpu_stats();
    ftrace::WriteCpuStats(cpu.cpu, now, &out);
    if (start) {
      cpu.start = now;
      cpu.have_start = true;
    } else if (cpu.have_start) {
      counters_.overrun += Delta(now.overrun, cpu.start.overrun);
      counters_.commit_overrun +=
          Delta(now.commit_overrun, cpu.start.commit_overrun);
      counters_.dropped_events +=
          Delta(now.dropped_events, cpu.start.dropped_events);
    }
  }
  if (start) {
    for (const std::string& e : unknown_)
      stats.add_unknown_ftrace_events(e);
    for (const std::string& e : failed_)
      stats.add_failed_ftrace_events(e);
  }
  stats.set_cpu_buffer_size_pages(buffer_pages_);
  counters_.stats_packets++;
}

void FtraceSource::Finish() {
  if (finished_)
    return;
  finished_ = true;
  base::Status s = instance_->SetTracingOn(false);
  if (!s.ok())
    RT_ELOG("ftrace instance %s: %s", instance_->name().c_str(),
            s.message().c_str());
  // Everything left: at most the whole buffer of each CPU.
  const std::atomic<bool> never{false};
  Drain(buffer_pages_ + kPagesPerBundle, never);
  WriteStats(/*start=*/false);
  writer_->Flush();
}

}  // namespace probes
}  // namespace ringtrace
