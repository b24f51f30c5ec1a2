#!/usr/bin/env python3
# tests/unit/a64-insn-gen.py - the expected words of tests/unit/a64-insn.c,
# made by binutils, not by memtap: each case is an instruction assembled
# at its original address and the code memtap must write for it at
# another address, both assembled by aarch64-linux-gnu-as and placed by
# aarch64-linux-gnu-ld at those addresses.  Prints the C rows of
# a64-insn.c's relocs[] table; run it again after changing a case
# (`python3 tests/unit/a64-insn-gen.py > rows`), and read the table with
# aarch64-linux-gnu-objdump when in doubt.  Not run by `make check`:
# the unit test needs no cross tools.
import os
import subprocess
import sys
import tempfile

P = 0x400100            # the original instruction
NEAR = 0x408000         # everything in reach (TBZ's 32 KiB too)
MID = 0x3400100         # 48 MiB: B reaches, ADR/LDR/B.cond/CBZ do not
G2 = 0x80400100         # 2 GiB: ADRP reaches, B does not
FAR = 0x7f0000001000    # beyond ADRP's 4 GiB
T = 0x404000            # a target near P
TODD = 0x404321         # an ADR target that is not 4-aligned
PG = 0x4a0000           # an ADRP page
BTI = 1                 # A64_RELOC_BTI

QUAD = lambda v: '.quad %#x' % v
LIT = ['b .+12']        # after ldr xN, .+8: jump over the .quad

# (name, original at P, at, flags, expected at `at`, scratch)
cases = []


def case(name, orig, at, expect, flags=0, scratch=-1):
    cases.append((name, orig, at, flags, expect, scratch))


# the symbols the cases name, defined at link time (an absolute symbol
# of the assembler would be resolved against the section's offset)
SYMS = {'T': T, 'TODD': TODD, 'PG': PG, 'RA': P + 4, 'BACK': P - 0x100}


# ADR / ADRP
case('adr near', 'adr x0, TODD', NEAR, ['adr x0, TODD'])
case('adr mid', 'adr x0, TODD', MID, ['adrp x0, TODD', 'add x0, x0, #0x321'])
case('adr 2g', 'adr x0, TODD', G2, ['adrp x0, TODD', 'add x0, x0, #0x321'])
case('adr far', 'adr x0, TODD', FAR, ['ldr x0, .+8'] + LIT + [QUAD(TODD)])
case('adr xzr far', 'adr xzr, TODD', FAR, ['nop'])
case('adrp near', 'adrp x1, PG', NEAR, ['adrp x1, PG'])
case('adrp 2g', 'adrp x1, PG', G2, ['adrp x1, PG'])
case('adrp far', 'adrp x1, PG', FAR, ['ldr x1, .+8'] + LIT + [QUAD(PG)])
case('adrp x30 far', 'adrp x30, PG', FAR, ['ldr x30, .+8'] + LIT + [QUAD(PG)])
# literal loads
case('ldr x near', 'ldr x2, T', NEAR, ['ldr x2, T'])
case('ldr x mid', 'ldr x2, T', MID, ['adrp x2, T', 'add x2, x2, #0', 'ldr x2, [x2]'])
case('ldr x far', 'ldr x2, T + 0x84', FAR,
     ['ldr x2, .+8'] + LIT + [QUAD(T + 0x84), 'ldr x2, [x2]'])
case('ldr w near', 'ldr w3, T', NEAR, ['ldr w3, T'])
case('ldr w mid', 'ldr w3, T + 4', MID, ['adrp x3, T', 'add x3, x3, #4', 'ldr w3, [x3]'])
case('ldr w far', 'ldr w3, T', FAR, ['ldr x3, .+8'] + LIT + [QUAD(T), 'ldr w3, [x3]'])
case('ldrsw near', 'ldrsw x4, T', NEAR, ['ldrsw x4, T'])
case('ldrsw mid', 'ldrsw x4, T', MID, ['adrp x4, T', 'add x4, x4, #0', 'ldrsw x4, [x4]'])
case('ldrsw far', 'ldrsw x4, T', FAR, ['ldr x4, .+8'] + LIT + [QUAD(T), 'ldrsw x4, [x4]'])
case('ldr s near', 'ldr s5, T', NEAR, ['ldr s5, T'])
case('ldr s mid', 'ldr s5, T', MID, ['adrp x16, T', 'add x16, x16, #0', 'ldr s5, [x16]'],
     scratch=16)
case('ldr s far', 'ldr s5, T', FAR, ['ldr x16, .+8'] + LIT + [QUAD(T), 'ldr s5, [x16]'],
     scratch=16)
case('ldr d near', 'ldr d6, T', NEAR, ['ldr d6, T'])
case('ldr d mid', 'ldr d6, T', MID, ['adrp x16, T', 'add x16, x16, #0', 'ldr d6, [x16]'],
     scratch=16)
case('ldr d far', 'ldr d6, T', FAR, ['ldr x16, .+8'] + LIT + [QUAD(T), 'ldr d6, [x16]'],
     scratch=16)
case('ldr q near', 'ldr q7, T', NEAR, ['ldr q7, T'])
case('ldr q mid', 'ldr q7, T', MID, ['adrp x16, T', 'add x16, x16, #0', 'ldr q7, [x16]'],
     scratch=16)
case('ldr q far', 'ldr q16, T', FAR, ['ldr x16, .+8'] + LIT + [QUAD(T), 'ldr q16, [x16]'],
     scratch=16)
case('ldr x16 far', 'ldr x16, T', FAR, ['ldr x16, .+8'] + LIT + [QUAD(T), 'ldr x16, [x16]'])
case('ldr xzr far', 'ldr xzr, T', FAR, ['ldr x16, .+8'] + LIT + [QUAD(T), 'ldr xzr, [x16]'],
     scratch=16)
case('prfm near', 'prfm pldl1keep, T', NEAR, ['prfm pldl1keep, T'])
case('prfm mid', 'prfm pldl1keep, T', MID,
     ['adrp x16, T', 'add x16, x16, #0', 'prfm pldl1keep, [x16]'], scratch=16)
case('prfm far', 'prfm pstl2strm, T', FAR,
     ['ldr x16, .+8'] + LIT + [QUAD(T), 'prfm pstl2strm, [x16]'], scratch=16)
# B, BL
case('b near', 'b T', NEAR, ['b T'])
case('b mid', 'b T', MID, ['b T'])
case('b 2g', 'b T', G2, ['adrp x16, T', 'add x16, x16, #0', 'br x16'], scratch=16)
case('b far', 'b T + 8', FAR, ['ldr x16, .+8', 'br x16', QUAD(T + 8)], scratch=16)
case('b mid bti', 'b T', MID, ['b T'], flags=BTI)
case('bl near', 'bl T', NEAR, ['adr x30, RA', 'b T'])
case('bl mid', 'bl T', MID, ['adrp x30, RA', 'add x30, x30, #0x104', 'b T'])
case('bl 2g', 'bl T', G2,
     ['adrp x30, RA', 'add x30, x30, #0x104', 'adrp x16, T', 'add x16, x16, #0', 'br x16'],
     scratch=16)
case('bl far', 'bl T', FAR,
     ['ldr x30, .+8'] + LIT + [QUAD(P + 4), 'ldr x16, .+8', 'br x16', QUAD(T)], scratch=16)
# B.cond
case('b.ne near', 'b.ne T', NEAR, ['b.ne T'])
case('b.ne back near', 'b.ne BACK', NEAR, ['b.ne BACK'])
case('b.ne mid', 'b.ne T', MID, ['b.eq .+8', 'b T'])
case('b.ne mid bti', 'b.ne T', MID, ['b.eq .+8', 'b T'], flags=BTI)
case('b.ne 2g', 'b.ne T', G2, ['b.eq .+16', 'adrp x16, T', 'add x16, x16, #0', 'br x16'],
     scratch=16)
case('b.lt far', 'b.lt T', FAR, ['b.ge .+20', 'ldr x16, .+8', 'br x16', QUAD(T)],
     scratch=16)
case('b.hi far', 'b.hi T', FAR, ['b.ls .+20', 'ldr x16, .+8', 'br x16', QUAD(T)],
     scratch=16)
case('b.al near', 'b.al T', NEAR, ['b.al T'])
case('b.al mid', 'b.al T', MID, ['b T'])
case('b.al far', 'b.al T', FAR, ['ldr x16, .+8', 'br x16', QUAD(T)], scratch=16)
case('b.nv far', 'b.nv T', FAR, ['ldr x16, .+8', 'br x16', QUAD(T)], scratch=16)
# CBZ, CBNZ
case('cbz near', 'cbz x5, T', NEAR, ['cbz x5, T'])
case('cbz mid', 'cbz x5, T', MID, ['cbnz x5, .+8', 'b T'])
case('cbz far', 'cbz x5, T', FAR, ['cbnz x5, .+20', 'ldr x16, .+8', 'br x16', QUAD(T)],
     scratch=16)
case('cbnz w far', 'cbnz w9, T', FAR, ['cbz w9, .+20', 'ldr x16, .+8', 'br x16', QUAD(T)],
     scratch=16)
case('cbnz x16 far', 'cbnz x16, T', FAR,
     ['cbz x16, .+20', 'ldr x17, .+8', 'br x17', QUAD(T)], scratch=17)
case('cbz w16 2g', 'cbz w16, T', G2,
     ['cbnz w16, .+16', 'adrp x17, T', 'add x17, x17, #0', 'br x17'], scratch=17)
# TBZ, TBNZ
case('tbz near', 'tbz x6, #3, T', NEAR, ['tbz x6, #3, T'])
case('tbz mid', 'tbz x6, #3, T', MID, ['tbnz x6, #3, .+8', 'b T'])
case('tbz far', 'tbz w6, #3, T', FAR,
     ['tbnz w6, #3, .+20', 'ldr x16, .+8', 'br x16', QUAD(T)], scratch=16)
case('tbnz b5 far', 'tbnz x7, #40, T', FAR,
     ['tbz x7, #40, .+20', 'ldr x16, .+8', 'br x16', QUAD(T)], scratch=16)
case('tbnz x16 mid', 'tbnz x16, #63, T', MID, ['tbz x16, #63, .+8', 'b T'])
case('tbz x16 far', 'tbz x16, #0, T', FAR,
     ['tbnz x16, #0, .+20', 'ldr x17, .+8', 'br x17', QUAD(T)], scratch=17)
# BLR, BR, RET and what is copied
case('blr near', 'blr x3', NEAR, ['mov x16, x3', 'adr x30, RA', 'br x16'], scratch=16)
case('blr far', 'blr x3', FAR,
     ['mov x16, x3', 'ldr x30, .+8'] + LIT + [QUAD(P + 4), 'br x16'], scratch=16)
case('blr x17 mid', 'blr x17', MID, ['adrp x30, RA', 'add x30, x30, #0x104', 'br x17'])
case('blr x30 near', 'blr x30', NEAR, ['mov x16, x30', 'adr x30, RA', 'br x16'], scratch=16)
case('br far', 'br x9', FAR, ['br x9'])
case('ret far', 'ret', FAR, ['ret'])
case('retaa far', 'retaa', FAR, ['retaa'])
case('braa far', 'braa x1, x2', FAR, ['braa x1, x2'])
case('stp far', 'stp x29, x30, [sp, #-16]!', FAR, ['stp x29, x30, [sp, #-16]!'])
case('paciasp far', 'paciasp', FAR, ['paciasp'])
case('bti c far', 'bti c', FAR, ['bti c'])
case('ldar far', 'ldar x0, [x1]', FAR, ['ldar x0, [x1]'])
case('casp far', 'casp x0, x1, x2, x3, [x4]', FAR, ['casp x0, x1, x2, x3, [x4]'])
case('svc far', 'svc #0', FAR, ['svc #0'])


def assemble(lines, at, work):
    src = os.path.join(work, 'a.s')
    obj = os.path.join(work, 'a.o')
    elf = os.path.join(work, 'a.elf')
    raw = os.path.join(work, 'a.bin')
    with open(src, 'w') as f:
        f.write('.arch armv8.5-a+pauth+lse\n.text\n.globl _start\n_start:\n')
        f.write('\n'.join('\t' + x for x in lines) + '\n')
    subprocess.run(['aarch64-linux-gnu-as', '-o', obj, src], check=True)
    defs = ['--defsym=%s=%#x' % kv for kv in SYMS.items()]
    subprocess.run(['aarch64-linux-gnu-ld', '-N', '--no-warn-rwx-segments', '-Ttext=%#x' % at, '-o', elf, obj] + defs,
                   check=True)
    subprocess.run(['aarch64-linux-gnu-objcopy', '-O', 'binary', '-j', '.text', elf, raw],
                   check=True)
    data = open(raw, 'rb').read()
    return [int.from_bytes(data[i:i + 4], 'little') for i in range(0, len(data), 4)]


def main():
    with tempfile.TemporaryDirectory() as work:
        for name, orig, at, flags, expect, scratch in cases:
            w = assemble([orig], P, work)
            assert len(w) == 1, name
            e = assemble(expect, at, work)
            words = ', '.join('0x%08x' % x for x in e)
            print('\t{ "%s", 0x%08x, %#x, %d, %d, %d, { %s } },' %
                  (name, w[0], at, flags, scratch, len(e) * 4, words))


if __name__ == '__main__':
    sys.exit(main())
