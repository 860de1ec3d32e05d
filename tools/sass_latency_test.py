"""Tests of tools/sass_latency.py on hand-written nvdisasm-style SASS."""
import argparse
import unittest

import sass_latency


def sass(*lines):
    """nvdisasm's layout: /*addr*/ instruction ; (labels on their own line)."""
    out, addr = [], 0
    for line in lines:
        if line.endswith(':'):
            out.append(line)
            continue
        out.append(f'        /*{addr:04x}*/                   {line} ;')
        addr += 0x10
    return '\n'.join(out)


def run(text, decisions=None, l2=300, groups=(300, 1000), issue=1):
    instructions, labels = sass_latency.parse(text)
    args = argparse.Namespace(l2=l2, groups=list(groups), issue=issue)
    return sass_latency.walk(instructions, labels, decisions or {}, args, {})


class RegistersTest(unittest.TestCase):

    def test_pairs_vectors_and_predicates(self):
        self.assertEqual(sass_latency.registers('[R4.64+0x40]'), ['R4', 'R5'])
        self.assertEqual(sass_latency.registers('R8', 4),
                         ['R8', 'R9', 'R10', 'R11'])
        self.assertEqual(sass_latency.registers('UR6'), ['UR6'])
        self.assertEqual(sass_latency.registers('!P3'), ['P3'])
        self.assertEqual(sass_latency.registers('RZ'), [])


class WalkTest(unittest.TestCase):

    def test_independent_instructions_issue_back_to_back(self):
        count, end = run(sass('FADD R1, R2, R3', 'FADD R4, R5, R6', 'EXIT'))
        self.assertEqual(count, 3)
        self.assertEqual(end, 2 + sass_latency.ALU)

    def test_a_load_use_waits_for_the_load(self):
        _, end = run(sass('LDG.E R2, [R4.64]', 'FADD R3, R2, R2', 'EXIT'),
                     l2=300)
        # Load issued at 1, ready at 301; the add issues at 302.
        self.assertEqual(end, 302 + sass_latency.ALU)

    def test_vector_load_defines_every_register(self):
        _, end = run(sass('LDS.128 R8, [R1]', 'FADD R0, R11, R11', 'EXIT'))
        self.assertEqual(end, 1 + sass_latency.LATENCY['LDS'] + 1 +
                         sass_latency.ALU)

    def test_depbar_waits_for_all_but_the_newest_groups(self):
        text = sass('LDGSTS.E.BYPASS.128 [R1], [R2.64]', 'LDGDEPBAR',
                    'LDGSTS.E.BYPASS.128 [R3], [R4.64]', 'LDGDEPBAR',
                    'DEPBAR.LE SB0, 0x1', 'EXIT')
        # A group completes its latency after its commit (cycle 2, 4):
        # group 1 at 102, group 2 at 5004. The DEPBAR issues a cycle after
        # what it waits for, the EXIT a cycle later.
        _, end = run(text, groups=(100, 5000))
        self.assertEqual(end, 102 + 2)
        _, end = run(text.replace('0x1', '0x0'), groups=(100, 5000))
        self.assertEqual(end, 5004 + 2)

    def test_branch_decisions_per_visit(self):
        text = sass('.L_x_1:', 'FADD R1, R1, R1', '@P0 BRA `(.L_x_1)', 'EXIT')
        # Taken twice, then not: three passes through the loop body.
        count, _ = run(text, {0x10: 'TTF'})
        self.assertEqual(count, 3 * 2 + 1)
        count, _ = run(text)  # default: not taken
        self.assertEqual(count, 3)

    def test_predicated_exit_ends_only_when_decided(self):
        text = sass('@P0 EXIT', 'FADD R1, R2, R3', 'EXIT')
        self.assertEqual(run(text, {0x0: 'T'})[0], 1)
        self.assertEqual(run(text)[0], 3)

    def test_issue_interval(self):
        _, end = run(sass('FADD R1, R2, R3', 'FADD R4, R5, R6', 'EXIT'),
                     issue=2)
        self.assertEqual(end, 4 + sass_latency.ALU)


if __name__ == '__main__':
    unittest.main()
