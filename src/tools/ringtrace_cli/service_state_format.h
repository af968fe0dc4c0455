/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// Text for people from what the service reports: the tables of
// `ringtrace --query` and the progress line of a running session.
//
// Every string the service relays (producer and session names, data source
// names, declared categories, their tags and descriptions) comes from other
// processes and is printed with its control and
// non-ASCII bytes replaced by '?', so that no peer can send escape sequences
// to the user's terminal.

#ifndef SRC_TOOLS_RINGTRACE_CLI_SERVICE_STATE_FORMAT_H_
#define SRC_TOOLS_RINGTRACE_CLI_SERVICE_STATE_FORMAT_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "protos/ringtrace/ipc/consumer_port.pb.h"

namespace ringtrace {
namespace cli {

// Columns separated by two spaces, each as wide as its widest cell, cells
// left-aligned, no trailing white space. Rows shorter than the header are
// padded with empty cells; longer ones are cut.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void AddRow(std::vector<std::string> row);
  std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;  // rows_[0] is the header
};

// Printable ASCII only: every other byte becomes '?'. Empty becomes "-".
std::string Sanitize(const std::string& s);

// 1536 -> "1.5 KiB"; below 1 KiB in bytes ("512 B").
std::string FormatBytes(uint64_t bytes);

// 1234 -> "1.2s", 83000 -> "1m23s", 7384000 -> "2h03m".
std::string FormatDurationMs(uint64_t ms);

// The tables of `ringtrace --query` (producers; the categories their data
// sources declared, when any did; sessions; buffers), each under a title,
// and the service's limits.
std::string FormatServiceState(const ringtrace::protos::ServiceState& state);

// One line (no newline) about session |session_id|: elapsed time, how full
// its buffers are, the producers connected, data source instances and
// packets lost; "session N: not found" if the state does not list it.
std::string FormatProgressLine(const ringtrace::protos::ServiceState& state,
                               uint64_t session_id);

}  // namespace cli
}  // namespace ringtrace

#endif  // SRC_TOOLS_RINGTRACE_CLI_SERVICE_STATE_FORMAT_H_
