#!/bin/bash
# Thirty-fourth session, second call: call.sh with rowearly's successors
# against hbase (HEAD's gdn_bench):
#   rowearly2 - rowearly with its unrolled passes skipped at n = 0
#               (rowearly2.patch here);
#   rawqk     - rowearly2 with q, k left unscaled on that route: the dots'
#               sums are scaled by rq, rk instead (rawqk.patch here).
# Run as `LIMIT=400 bash bench/results/run108/call2.sh`. Carry [".device"]
# with hbase, rowearly2 and rawqk (bin parked by hand).
VARIANTS="rowearly2 rawqk" exec bash "$(dirname "$0")/call.sh"
