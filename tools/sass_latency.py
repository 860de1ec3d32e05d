#!/usr/bin/env python3
"""A rough in-order latency model of one warp's path through a kernel's SASS.

For the sessions without a GPU: given the SASS of one kernel (tools/sass_dump.sh
with a name filter that leaves one kernel) and the branch decisions of one
path, it issues the instructions in order, one per --issue cycles, each when
its source registers are ready, and reports when the warp's last result is
ready. It answers "what does the warp wait for, and in which order" questions,
e.g. how many serial memory latencies lie on a path, or how far a code change
moves the issue of the state-tile copies.

  tools/sass_latency.py K.sass [ADDR=TF ...] [--l2 300] [--groups 300,1800]
      [--issue 1] [--lat ADDR=N ...] [--trace]

  ADDR=TF...  conditional branch at hex ADDR: taken (T) or not (F) at its
              1st, 2nd, ... visit (the last letter repeats); default F. An
              unconditional branch is taken; a predicated EXIT with T ends.
              Run with --trace and read the branches' conditions to set them.
  --l2 N      latency of every register load (LDG / LD), cycles.
  --groups    completion latency of the cp.async commit groups in commit
              order (the last value repeats), from the group's last copy.
  --lat A=N   latency of the instruction at hex A (e.g. a load whose
              predicate is off in the scenario: a few cycles).

What it leaves out, so that its figures are orders of magnitude, not
predictions: other warps (issue contention: approximate with --issue 2),
queueing in the load pipeline and the memory system (one fixed latency per
load kind), dual issue, bank conflicts, instruction-cache and constant-cache
misses. Latencies of the other classes are the constants below.
"""
import argparse
import re

ALU = 5
LATENCY = {
    'MUFU': 20, 'SHFL': 25, 'LDS': 30, 'LDSM': 30, 'LDC': 15, 'S2R': 20,
    'S2UR': 20, 'BAR': 20, 'ULDC': 4, 'HMMA': 30, 'VOTEU': 5,
}
NO_DEST = {'STS', 'STG', 'ST', 'BRA', 'BAR', 'DEPBAR', 'EXIT', 'LDGSTS',
           'LDGDEPBAR', 'ACQBULK', 'PREEXIT', 'BSSY', 'BSYNC', 'CALL', 'RET',
           'WARPSYNC', 'NOP', 'RED', 'ATOM', 'CCTL'}
SETS_PREDICATE = {'ISETP', 'FSETP', 'PLOP3', 'VOTEU', 'LOP3'}


def registers(operand, width=1):
    """The registers an operand names (R4.64 and vector widths expanded)."""
    out = []
    for m in re.finditer(r'\b(UR|R|UP|P)(\d+)(\.64)?', operand):
        kind, n = m.group(1), int(m.group(2))
        if kind in ('R', 'UR'):
            w = 2 if m.group(3) else width
            out += [f'{kind}{n + i}' for i in range(w)]
        else:
            out.append(f'{kind}{n}')
    return out


def vector_width(op):
    return 4 if '.128' in op else 2 if '.64' in op else 1


def parse(text):
    """Instructions (address, predicate, opcode, operands) and label indices
    of nvdisasm output."""
    instructions, labels = [], {}
    for line in text.splitlines():
        m = re.match(r'^(\.L_x_\d+):', line.strip())
        if m:
            labels[m.group(1)] = len(instructions)
            continue
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
        if not m:
            continue
        body = m.group(2).replace('.reuse', '').strip()
        pred = None
        pm = re.match(r'(@!?U?P\w+)\s+(.*)', body)
        if pm:
            pred, body = pm.group(1), pm.group(2)
        op, _, operands = body.partition(' ')
        instructions.append(dict(addr=int(m.group(1), 16), pred=pred, op=op,
                                 operands=operands.strip()))
    return instructions, labels


def operands_of(ins):
    op, base = ins['op'], ins['op'].split('.')[0]
    ops = [s.strip() for s in ins['operands'].split(',')] if ins['operands'] \
        else []
    dst, src = [], []
    if base in NO_DEST:
        w = vector_width(op) if base in ('STS', 'STG', 'ST') else 1
        for s in ops:
            src += registers(s, w)
    elif base == 'SHFL':  # SHFL.X PT, Rd, Ra, b, c
        dst = registers(ops[1])
        for s in ops[2:]:
            src += registers(s)
    else:
        dst = registers(ops[0], 2 if base == 'CS2R' else vector_width(op)) \
            if ops else []
        if base in SETS_PREDICATE and len(ops) > 1 and \
                re.match(r'U?P', ops[1]):
            dst += registers(ops[1])
        for s in ops[1:]:
            src += registers(s)
    if ins['pred']:
        src += registers(ins['pred'].lstrip('@!'))
    return dst, src


def walk(instructions, labels, decisions, args, latency_at, trace=False):
    """Issues the path; returns (instructions issued, cycle of the last
    result). args: l2, groups (list), issue."""
    pc, t, ready = 0, 0, {}
    groups, pending, visits, count = [], [], {}, 0

    def decide(addr):
        v = visits.get(addr, 0)
        visits[addr] = v + 1
        d = decisions.get(addr, 'F')
        return (d[v] if v < len(d) else d[-1]) == 'T'

    while pc < len(instructions):
        x = instructions[pc]
        base = x['op'].split('.')[0]
        dst, src = operands_of(x)
        start = max([ready.get(r, 0) for r in src] + [t])
        if base == 'DEPBAR':  # DEPBAR.LE SB0, N: all but the N newest
            n = int(re.search(r'0x([0-9a-f]+)', x['operands']).group(1), 16)
            start = max([start] + (groups[:len(groups) - n] if n else groups))
        if base == 'BAR':
            start += LATENCY['BAR']
        t = start + args.issue
        count += 1
        if base in ('LDG', 'LD'):
            lat = args.l2
        else:
            lat = LATENCY.get(base, ALU)
        lat = latency_at.get(x['addr'], lat)
        if base == 'LDGSTS':
            pending.append(t)
        if base == 'LDGDEPBAR':
            g = args.groups[min(len(groups), len(args.groups) - 1)]
            groups.append(max(pending + [t]) + g)
            pending = []
        for r in dst:
            ready[r] = t + lat
        if trace:
            print(f'{x["addr"]:05x} t={t:5d} {x["pred"] or "":6s} {x["op"]} '
                  f'{x["operands"]}')
        if base == 'EXIT' and (not x['pred'] or decide(x['addr'])):
            break
        if base == 'BRA' and (not x['pred'] or decide(x['addr'])):
            pc = labels[re.search(r'(\.L_x_\d+)', x['operands']).group(1)]
            continue
        pc += 1
    return count, max([t] + list(ready.values()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('sass')
    ap.add_argument('decisions', nargs='*', help='ADDR=TF... (hex address)')
    ap.add_argument('--l2', type=int, default=300)
    ap.add_argument('--groups', default='300,1800')
    ap.add_argument('--issue', type=int, default=1)
    ap.add_argument('--lat', action='append', default=[])
    ap.add_argument('--trace', action='store_true')
    args = ap.parse_args()
    args.groups = [int(v) for v in args.groups.split(',')]
    decisions = {int(k, 16): v for k, v in
                 (d.split('=') for d in args.decisions)}
    latency_at = {int(k, 16): int(v) for k, v in
                  (d.split('=') for d in args.lat)}
    with open(args.sass) as f:
        instructions, labels = parse(f.read())
    count, end = walk(instructions, labels, decisions, args, latency_at,
                      args.trace)
    print(f'{count} instructions issued; last result ready at {end} cycles')


if __name__ == '__main__':
    main()
