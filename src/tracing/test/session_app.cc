/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/tracing/test/session_app.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "protos/perfetto/trace/trace.pb.h"

namespace ringtrace {
namespace test {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty())
        out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty())
    out.push_back(cur);
  return out;
}

// "<a>,<b>" into |a| and |b|.
bool ParsePair(const std::string& s, uint64_t* a, uint64_t* b) {
  const std::vector<std::string> parts = Split(s, ',');
  if (parts.size() != 2)
    return false;
  *a = strtoull(parts[0].c_str(), nullptr, 10);
  *b = strtoull(parts[1].c_str(), nullptr, 10);
  return true;
}

}  // namespace

bool SessionApp::Start(const std::string& bin_dir,
                       const std::string& socket,
                       uint32_t threads,
                       const std::vector<std::string>& extra,
                       std::string* error) {
  std::vector<std::string> argv = {bin_dir + "/ringtrace_session_app",
                                   "--socket", socket, "--threads",
                                   std::to_string(threads)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  threads_ = threads;
  process_.reset(new base::Subprocess(argv));
  return process_->Start(error);
}

bool SessionApp::WaitLine(const std::string& word,
                          size_t nth,
                          int timeout_ms,
                          std::vector<std::string>* fields) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(timeout_ms);
  const std::string prefix = word + " ";
  for (;;) {
    const std::string out = process_->output();
    size_t seen = 0, pos = 0;
    // Complete lines only: the app may be writing the last one.
    for (size_t nl; (nl = out.find('\n', pos)) != std::string::npos;
         pos = nl + 1) {
      const std::string line = out.substr(pos, nl - pos);
      if (line.compare(0, prefix.size(), prefix) != 0 || ++seen < nth)
        continue;
      *fields = Split(line.substr(prefix.size()), ' ');
      return true;
    }
    if (Clock::now() > deadline || process_->Ended())
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool SessionApp::WaitStart(size_t nth, int timeout_ms, InstanceBounds* b) {
  std::vector<std::string> f;
  if (!WaitLine("START", nth, timeout_ms, &f) || f.size() != 3 + threads_)
    return false;
  *b = InstanceBounds();
  b->generation = strtoull(f[0].c_str(), nullptr, 10);
  b->instance_id = static_cast<uint32_t>(strtoul(f[1].c_str(), nullptr, 10));
  b->target_buffer = static_cast<uint32_t>(strtoul(f[2].c_str(), nullptr, 10));
  b->before.resize(threads_);
  b->first.resize(threads_);
  for (uint32_t k = 0; k < threads_; k++) {
    if (!ParsePair(f[3 + k], &b->before[k], &b->first[k]))
      return false;
  }
  return true;
}

bool SessionApp::WaitStop(int timeout_ms, InstanceBounds* b) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (size_t nth = 1;; nth++) {
    const int left =
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                             deadline - Clock::now())
                             .count());
    std::vector<std::string> f;
    if (!WaitLine("STOP", nth, std::max(left, 0), &f))
      return false;
    if (f.size() != 2 + threads_ ||
        strtoull(f[0].c_str(), nullptr, 10) != b->generation ||
        strtoul(f[1].c_str(), nullptr, 10) != b->instance_id) {
      continue;
    }
    b->last.resize(threads_);
    b->after.resize(threads_);
    for (uint32_t k = 0; k < threads_; k++) {
      if (!ParsePair(f[2 + k], &b->last[k], &b->after[k]))
        return false;
    }
    return true;
  }
}

bool SessionApp::Mark(int timeout_ms, std::vector<uint64_t>* ended) {
  process_->Signal(SIGUSR1);
  std::vector<std::string> f;
  if (!WaitLine("MARK", ++marks_, timeout_ms, &f) || f.size() != 1 + threads_)
    return false;
  ended->clear();
  for (uint32_t k = 0; k < threads_; k++)
    ended->push_back(strtoull(f[1 + k].c_str(), nullptr, 10));
  return true;
}

bool SessionApp::WaitProgress(const std::vector<uint64_t>& at_least,
                              int timeout_ms) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    std::vector<uint64_t> ended;
    if (!Mark(timeout_ms, &ended))
      return false;
    bool reached = true;
    for (uint32_t k = 0; k < threads_; k++)
      reached = reached && ended[k] >= at_least[k];
    if (reached)
      return true;
    if (Clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

DecodedTrace DecodeTrace(const std::string& path, pid_t app_pid) {
  DecodedTrace out;
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  perfetto::protos::Trace trace;
  if (!in || !trace.ParseFromString(bytes.str()))
    return out;
  out.parsed = true;
  for (const perfetto::protos::TracePacket& p : trace.packet()) {
    if (p.has_trace_stats()) {
      out.has_stats = true;
      out.stats = p.trace_stats();
    }
    if (!p.has_trusted_pid() || p.trusted_pid() != app_pid)
      continue;
    out.app_packets++;
    AppSequence& seq = out.sequences[p.trusted_packet_sequence_id()];
    if (!p.has_track_event() || !p.track_event().has_counter_value()) {
      seq.other_packets++;
      continue;
    }
    const uint64_t v = static_cast<uint64_t>(p.track_event().counter_value());
    const uint32_t thread = static_cast<uint32_t>(v >> 32);
    if (!seq.numbers.empty() && seq.thread != thread)
      seq.mixed_threads = true;
    seq.thread = thread;
    seq.numbers.push_back(v & 0xffffffffu);
    seq.dropped_before.push_back(p.previous_packet_dropped());
  }
  return out;
}

std::vector<const AppSequence*> SequencesOf(const DecodedTrace& trace,
                                            uint32_t thread) {
  std::vector<const AppSequence*> out;
  for (const auto& it : trace.sequences) {
    if (!it.second.numbers.empty() && it.second.thread == thread)
      out.push_back(&it.second);
  }
  return out;
}

::testing::AssertionResult HoldsInstance(const DecodedTrace& trace,
                                         const InstanceBounds& b,
                                         bool lossless) {
  if (!trace.parsed)
    return ::testing::AssertionFailure() << "the trace does not parse";
  for (const auto& it : trace.sequences) {
    if (it.second.mixed_threads)
      return ::testing::AssertionFailure()
             << "sequence " << it.first << " mixes threads";
  }
  for (uint32_t k = 0; k < b.before.size(); k++) {
    const std::vector<const AppSequence*> seqs = SequencesOf(trace, k);
    if (seqs.empty()) {
      if (b.last[k] > b.first[k])
        return ::testing::AssertionFailure()
               << "thread " << k << ": no packet, but events " << b.first[k]
               << ".." << b.last[k] - 1 << " must be there";
      continue;
    }
    if (seqs.size() > 1)
      return ::testing::AssertionFailure()
             << "thread " << k << ": " << seqs.size() << " sequences";
    const AppSequence& s = *seqs[0];
    for (size_t i = 1; i < s.numbers.size(); i++) {
      const bool hole = s.numbers[i] != s.numbers[i - 1] + 1;
      if (hole && (lossless || !s.dropped_before[i] ||
                   s.numbers[i] <= s.numbers[i - 1])) {
        return ::testing::AssertionFailure()
               << "thread " << k << ": " << s.numbers[i - 1] << " then "
               << s.numbers[i]
               << (s.dropped_before[i] ? " (dropped flag)" : " (no flag)");
      }
    }
    const uint64_t lo = s.numbers.front(), hi = s.numbers.back();
    if (lo < b.before[k] || lo > b.first[k] || hi + 1 < b.last[k] ||
        hi + 1 > b.after[k]) {
      return ::testing::AssertionFailure()
             << "thread " << k << ": holds " << lo << ".." << hi
             << ", must start in [" << b.before[k] << ", " << b.first[k]
             << "] and end in [" << b.last[k] << ", " << b.after[k] << "] - 1";
    }
    if (lossless && s.other_packets != kDescriptorsPerSequence)
      return ::testing::AssertionFailure()
             << "thread " << k << ": " << s.other_packets
             << " descriptor packets";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult NoLossInStats(const DecodedTrace& trace) {
  if (!trace.has_stats)
    return ::testing::AssertionFailure() << "no TraceStats";
  const perfetto::protos::TraceStats& st = trace.stats;
  for (const auto& b : st.buffer_stats()) {
    if (b.chunks_overwritten() != 0 || b.chunks_discarded() != 0 ||
        b.trace_writer_packet_loss() != 0) {
      return ::testing::AssertionFailure()
             << "buffer loss: " << b.ShortDebugString();
    }
  }
  if (st.ringtrace_packets_dropped_by_producers() != 0 ||
      st.invalid_packets() != 0) {
    return ::testing::AssertionFailure() << "loss: " << st.ShortDebugString();
  }
  return ::testing::AssertionSuccess();
}

perfetto::protos::TraceConfig AppConfig(
    uint32_t size_kb,
    perfetto::protos::TraceConfig::BufferConfig::FillPolicy policy) {
  perfetto::protos::TraceConfig config;
  auto* buffer = config.add_buffers();
  buffer->set_size_kb(size_kb);
  buffer->set_fill_policy(policy);
  auto* ds = config.add_data_sources()->mutable_config();
  ds->set_name("track_event");
  ds->mutable_track_event_config()->add_enabled_categories("e2e");
  return config;
}

}  // namespace test
}  // namespace ringtrace
