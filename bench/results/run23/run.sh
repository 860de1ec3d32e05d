#!/bin/bash
# Run 23: the script of ../run22/run.sh, run again with other binaries: .device/var = the L2 hints on both
# coefficient routes (staged k copies, register prefetch and appends of the fused route too), both builds
# with the FUSED lines in --replay-only. var_tests did not run (rc 127: the test's libraries were not packed).
exec bash "$(dirname "$0")/../run22/run.sh" "$@"
