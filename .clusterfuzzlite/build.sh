#!/bin/bash -eu
# ClusterFuzzLite build step: the project's OSS-Fuzz build script does it all.
"$SRC/kvprefix/fuzz/oss_fuzz_build.sh"
