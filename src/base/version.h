/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The version of ringtrace's binaries (ringtraced --version). The wire
// protocols carry their own versions (ipc::kProtocolVersion).

#ifndef SRC_BASE_VERSION_H_
#define SRC_BASE_VERSION_H_

namespace ringtrace {
namespace base {

constexpr char kRingtraceVersion[] = "0.1.0";

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_VERSION_H_
