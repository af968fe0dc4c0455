#!/usr/bin/env python3
# Copyright (C) 2026 The ringtrace authors.
"""Runs protoc for gn/proto_library.gni and fails with a clear message when the
compiler or the plugin is missing. Generates C++ (--cpp-out) or, with
--plugin and --plugin-out, runs the protoc-gen-ringtrace plugin."""

import argparse
import os
import subprocess
import sys


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument('--protoc', required=True)
  parser.add_argument('--proto-path', required=True)
  parser.add_argument('--cpp-out')
  parser.add_argument('--plugin', help='path of protoc-gen-ringtrace')
  parser.add_argument('--plugin-out')
  parser.add_argument('protos', nargs='+')
  args = parser.parse_args()
  if not os.access(args.protoc, os.X_OK):
    sys.stderr.write('protoc not found at %s: run tools/install-build-deps\n' %
                     args.protoc)
    return 1
  cmd = [args.protoc, '--proto_path=' + args.proto_path]
  if args.cpp_out:
    os.makedirs(args.cpp_out, exist_ok=True)
    cmd.append('--cpp_out=' + args.cpp_out)
  if args.plugin or args.plugin_out:
    if not (args.plugin and args.plugin_out):
      sys.stderr.write('--plugin and --plugin-out go together\n')
      return 2
    if not os.access(args.plugin, os.X_OK):
      sys.stderr.write('plugin not found at %s\n' % args.plugin)
      return 1
    os.makedirs(args.plugin_out, exist_ok=True)
    cmd += ['--plugin=protoc-gen-ringtrace=' + os.path.abspath(args.plugin),
            '--ringtrace_out=' + args.plugin_out]
  if len(cmd) == 2:
    sys.stderr.write('nothing to generate: pass --cpp-out or --plugin-out\n')
    return 2
  return subprocess.call(cmd + args.protos)


if __name__ == '__main__':
  sys.exit(main())
