#!/bin/bash
# Run 111 call 4 (thirty-eighth session, H100): call 3's file again on HEAD
# 8736d27 (the narrow-memory ReplaySSM 32-row tile up to 3072 pairs and the
# layer pair's kPrologue ReplaySSM launch at every size, both now kAuto).
# As run: `bash bench/results/run111/call3.sh` (carry [".device"], timeout
# 200); its files are in call4/.
exec bash "$(dirname "$0")/call3.sh"
