#!/usr/bin/env python3
# Copyright (C) 2026 The ringtrace authors.
"""Runs protoc for gn/proto_library.gni and fails with a clear message when the
compiler is missing."""

import argparse
import os
import subprocess
import sys


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--protoc', required=True)
  parser.add_argument('--proto-path', required=True)
  parser.add_argument('--cpp-out', required=True)
  parser.add_argument('protos', nargs='+')
  args = parser.parse_args()
  if not os.access(args.protoc, os.X_OK):
    sys.stderr.write('protoc not found at %s: run tools/install-build-deps\n' %
                     args.protoc)
    return 1
  os.makedirs(args.cpp_out, exist_ok=True)
  cmd = [args.protoc, '--proto_path=' + args.proto_path,
         '--cpp_out=' + args.cpp_out] + args.protos
  return subprocess.call(cmd)


if __name__ == '__main__':
  sys.exit(main())
