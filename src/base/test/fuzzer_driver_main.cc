/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// main() of fuzz targets built without libFuzzer (use_libfuzzer=false, see
// gn/fuzzer.gni): replays inputs through LLVMFuzzerTestOneInput.
//
//   fuzzer FILE_OR_DIR...   runs each file; for a directory, each regular
//                           file directly inside it (not recursive), in
//                           name order.
//   fuzzer                  runs the empty input once (a smoke test).
//
// Each input is copied into a heap buffer of exactly its size, so sanitizers
// catch reads past the end as libFuzzer would. Exit status: 0 when every
// input ran, 1 when a path could not be read (a finding aborts the process
// from inside the fuzz target, as under libFuzzer).

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv)
    __attribute__((weak));

namespace {

bool ReadFile(const std::string& path, std::vector<uint8_t>* out) {
  FILE* f = fopen(path.c_str(), "rb");
  if (!f)
    return false;
  out->clear();
  uint8_t buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
    out->insert(out->end(), buf, buf + n);
  const bool ok = !ferror(f);
  fclose(f);
  return ok;
}

void RunOne(const std::vector<uint8_t>& bytes) {
  const size_t size = bytes.size();
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size]);
  if (size > 0)
    memcpy(copy.get(), bytes.data(), size);
  LLVMFuzzerTestOneInput(copy.get(), size);
}

bool RunPath(const std::string& path, size_t* runs) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    fprintf(stderr, "fuzzer: cannot stat %s\n", path.c_str());
    return false;
  }
  std::vector<std::string> files;
  if (S_ISDIR(st.st_mode)) {
    DIR* dir = opendir(path.c_str());
    if (!dir) {
      fprintf(stderr, "fuzzer: cannot open %s\n", path.c_str());
      return false;
    }
    while (struct dirent* ent = readdir(dir)) {
      const std::string child = path + "/" + ent->d_name;
      struct stat cst;
      if (stat(child.c_str(), &cst) == 0 && S_ISREG(cst.st_mode))
        files.push_back(child);
    }
    closedir(dir);
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::vector<uint8_t> bytes;
  for (const std::string& file : files) {
    if (!ReadFile(file, &bytes)) {
      fprintf(stderr, "fuzzer: cannot read %s\n", file.c_str());
      return false;
    }
    RunOne(bytes);
    ++*runs;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  size_t runs = 0;
  bool ok = true;
  if (argc < 2) {
    RunOne({});
    runs = 1;
  }
  for (int i = 1; i < argc; i++)
    ok = RunPath(argv[i], &runs) && ok;
  fprintf(stderr, "fuzzer: ran %zu input(s)%s\n", runs,
          ok ? "" : ", some paths failed");
  return ok ? 0 : 1;
}
