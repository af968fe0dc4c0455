/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// The command-line reading shared by our binaries' main()s (ringtraced,
// ringtrace_example_app). It only splits argv into flags
// and values; what a flag means, its checks and messages stay in each main.
//
// Rules:
//   - Every argument after argv[0] is a flag, written "--name value" (the
//     next argument is the value, whatever it looks like) or "--name=value"
//     (the value is everything after the first '=', possibly empty:
//     "--a=b=c" has the value "b=c"). There are no positional arguments and
//     no boolean flags; "--" is not special (a flag with an empty name,
//     which no binary knows).
//   - "-h" and "--help", as a whole argument in a flag's place, ask for
//     help. ("--help=x" is a flag named --help; as a value, "--help" is a
//     value.) "--version" likewise asks for the version.
//   - '_' and '-' are the same in a flag's name: "--ring_kb" and
//     "--ring-kb" are one flag, so every binary takes both spellings
//     whichever one its usage text shows.
//   - A flag that is the last argument and has no '=' has no value: the
//     reader reports it (error()) rather than inventing one.
//
// ParseUint32() is the one number syntax of the flags: decimal digits only.

#ifndef SRC_BASE_FLAGS_H_
#define SRC_BASE_FLAGS_H_

#include <stdint.h>

#include <string>

namespace ringtrace {
namespace base {

struct Flag {
  // The name as written ("--ring_kb"), for messages.
  std::string name;
  // The name with every '_' turned into '-' ("--ring-kb").
  std::string normalized_name;
  std::string value;

  // True if this flag is |spelling|, '_' and '-' alike: Is("--ring_kb") and
  // Is("--ring-kb") both match "--ring_kb" and "--ring-kb".
  bool Is(const char* spelling) const;
};

// Reads argv[1..argc) one flag at a time:
//
//   base::FlagReader reader(argc, argv);
//   base::Flag flag;
//   while (reader.Next(&flag)) {
//     if (flag.Is("--out")) ...
//   }
//   if (reader.help()) ...                 // print the usage, exit 0
//   if (!reader.error().empty()) ...       // print it, exit with a usage error
//
// Not thread-safe; argv must outlive the reader.
class FlagReader {
 public:
  FlagReader(int argc, const char* const* argv);

  // Reads the next flag and its value into |*flag|. Returns false, for this
  // and every later call, at the end of argv, on -h/--help (help()),
  // --version (version()) and on a flag without a value (error()).
  bool Next(Flag* flag);

  // True once Next() stopped at -h or --help.
  bool help() const { return help_; }
  // True once Next() stopped at --version.
  bool version() const { return version_; }
  // Set once Next() stopped at a flag without a value: "missing value for
  // --x" (the flag as written). Empty otherwise.
  const std::string& error() const { return error_; }

 private:
  const int argc_;
  const char* const* const argv_;
  int next_ = 1;  // argv[0] is the program
  bool help_ = false;
  bool version_ = false;
  std::string error_;
};

// Parses a uint32 written as decimal digits and nothing else: no sign, no
// white space, no trailing characters, at most 4294967295 (leading zeros
// are fine). Returns false, leaving |*out| untouched, for anything else
// (including the empty string).
bool ParseUint32(const std::string& s, uint32_t* out);

}  // namespace base
}  // namespace ringtrace

#endif  // SRC_BASE_FLAGS_H_
