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

}  // namespace test
}  // namespace ftrace
}  // namespace ringtrace
