/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The data sources of ringtrace_probes as a producer serves them
// (docs/probes.md): "linux.ftrace", "linux.process_stats" and
// "linux.sys_stats". Each
// StartDataSource becomes an instance with its own writer (for the
// instance's target buffer) and its own schedule on the shared ProbesLoop;
// StopDataSource takes it off the loop, flushes and destroys its writer,
// and logs what it did.
//
// Config. The instance's own options come from the DataSourceConfig the
// service passes whole (DataSourceInstanceConfig::config; its
// ftrace_config / process_stats_config / sys_stats_config). Every field that is
// set but not implemented, and every value changed (a period below the
// minimum), is named in a log line when the instance starts (the
// *OptionsFromConfig notes): nothing is ignored silently.
//
// Thread model: a DataSourceHandler (include/ringtrace/producer.h): its
// calls come from the producer's reader thread, one at a time; the work
// runs on the loop's thread. running_instances() and start_failures() from
// any thread.

#ifndef SRC_TRACED_PROBES_PROBES_DATA_SOURCES_H_
#define SRC_TRACED_PROBES_PROBES_DATA_SOURCES_H_

#include <stdint.h>

#include <map>
#include <string>
#include <vector>

#include "protos/perfetto/config/ftrace/ftrace_config.pb.h"
#include "protos/perfetto/config/process_stats/process_stats_config.pb.h"
#include "protos/perfetto/config/sys_stats/sys_stats_config.pb.h"
#include "ringtrace/producer.h"
#include "src/base/thread_annotations.h"
#include "src/traced_probes/ftrace_source.h"
#include "src/traced_probes/probes_loop.h"
#include "src/traced_probes/process_stats_source.h"
#include "src/traced_probes/sys_stats_source.h"

namespace ringtrace {
namespace probes {

constexpr char kFtraceDataSource[] = "linux.ftrace";
constexpr char kProcessStatsDataSource[] = "linux.process_stats";
constexpr char kSysStatsDataSource[] = "linux.sys_stats";

// The options a config asks for; |*notes| gets one line per field set but
// not implemented, per value changed, and when the config asks for nothing
// to be recorded.
ProcessStatsOptions ProcessStatsOptionsFromConfig(
    const perfetto::protos::ProcessStatsConfig& config,
    std::vector<std::string>* notes);
SysStatsOptions SysStatsOptionsFromConfig(
    const perfetto::protos::SysStatsConfig& config,
    std::vector<std::string>* notes);
FtraceOptions FtraceOptionsFromConfig(
    const perfetto::protos::FtraceConfig& config,
    std::vector<std::string>* notes);

// Where linux.ftrace finds tracefs and names its instances.
struct FtraceEnvironment {
  // Empty: FindOrMountTracefs() at each start (the error, when there is
  // none, names what is missing and the command that fixes it).
  std::string tracefs_root;
  std::string instance_prefix = kFtraceInstancePrefix;
};

// 1e9 / sysconf(_SC_CLK_TCK): the unit of /proc's CPU times, in ns.
uint64_t NsPerClockTick();

class ProbesDataSource : public DataSourceHandler {
 public:
  enum class Kind { kFtrace, kProcessStats, kSysStats };

  // |loop| (not owned) must outlive the data source. |proc_root|: "/proc"
  // but in tests; |ftrace|: for kFtrace. |seen_pids| (not owned, may be
  // null; must outlive the data source): shared by the producer's
  // linux.ftrace, which offers the tids of its events, and
  // linux.process_stats, whose instances describe their processes on
  // demand.
  ProbesDataSource(Kind kind,
                   ProbesLoop* loop,
                   std::string proc_root,
                   FtraceEnvironment ftrace = {},
                   SeenPids* seen_pids = nullptr);
  // Stops the instances still running (as OnStop).
  ~ProbesDataSource() override;

  void OnStart(const DataSourceInstanceConfig& config) override;
  void OnStop(uint32_t instance_id) override;
  // Flushes every running instance (ProbesLoop::Flush) before it returns,
  // so before the service gets the FlushAck: linux.ftrace drains what the
  // kernel's buffers hold; the others only flush their writers (every run
  // already ends with a Flush()).
  void OnFlush(uint32_t flush_id) override;

  const char* name() const;
  size_t running_instances() const;
  uint64_t start_failures() const;

 private:
  class Instance;

  // Takes the instance off the loop (ProbesLoop::Remove), finishes it
  // (linux.ftrace: the last drain), logs its summary and destroys it
  // (flushing its writer).
  void StopInstance(ProbesLoop::Handle handle);

  const Kind kind_;
  ProbesLoop* const loop_;
  const std::string proc_root_;
  const FtraceEnvironment ftrace_;
  SeenPids* const seen_pids_;
  const uint64_t ns_per_tick_;
  mutable base::Mutex mutex_;
  // instance id -> the loop's handle of its Instance.
  std::map<uint32_t, ProbesLoop::Handle> instances_ RT_GUARDED_BY(mutex_);
  uint64_t start_failures_ RT_GUARDED_BY(mutex_) = 0;
};

}  // namespace probes
}  // namespace ringtrace

#endif  // SRC_TRACED_PROBES_PROBES_DATA_SOURCES_H_
