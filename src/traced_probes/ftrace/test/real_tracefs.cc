/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/ftrace/test/real_tracefs.h"

#include "src/traced_probes/ftrace/tracefs.h"

namespace ringtrace {
namespace ftrace {
namespace test {

bool RealTracefs(std::string* root, std::string* why) {
  base::Status s = FindOrMountTracefs(root);
  if (!s.ok()) {
    *why = "real-kernel test skipped: " + s.message();
    return false;
  }
  return true;
}

PinToFirstCpu::PinToFirstCpu() {
  ok_ = sched_getaffinity(0, sizeof(saved_), &saved_) == 0;
  int cpu = 0;
  while (ok_ && cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &saved_))
    cpu++;
  cpu_set_t one;
  CPU_ZERO(&one);
  if (ok_ && cpu < CPU_SETSIZE) {
    CPU_SET(cpu, &one);
    ok_ = sched_setaffinity(0, sizeof(one), &one) == 0;
    cpu_ = cpu;
  } else {
    ok_ = false;
  }
}

PinToFirstCpu::~PinToFirstCpu() {
  if (ok_)
    sched_setaffinity(0, sizeof(saved_), &saved_);
}

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace
