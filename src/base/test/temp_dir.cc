/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/base/test/temp_dir.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

#include "ringtrace/logging.h"

namespace ringtrace {
namespace base {

namespace {

// nftw callback: FTW_DEPTH visits a directory after its entries.
int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  remove(path);
  return 0;  // keep going: remove what can be removed
}

}  // namespace

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* made = mkdtemp(buf.data());
  RT_CHECK(made != nullptr);
  path_ = made;
}

TempDir::~TempDir() {
  nftw(path_.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace base
}  // namespace ringtrace
