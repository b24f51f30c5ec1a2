#!/bin/sh
# tests/unit/a64-detour-gen.sh - the expected words of
# tests/unit/a64-detour.c, made by binutils (aarch64-linux-gnu-as and
# -ld, with python3 to name absolute targets as symbols): each sequence
# assembled at its address, printed as words.  Run by hand in a scratch
# directory: sh a64-detour-gen.sh
# gen NAME ADDR <<asm : print the words of the asm assembled at ADDR
gen() {
	name=$1 addr=$2
	python3 -c '
import re,sys
src=sys.stdin.read()
syms=set()
def f(m):
    v=eval(m.group(2)); n="S_%x"%v; syms.add((n,v)); return m.group(1)+n
src=re.sub(r"^(\s*(?:b|bl|b\.\w+|cbz|cbnz|adr|adrp|ldr|ldrsw)\s+(?:[xwq]\d+,\s*)?(?:#\d+,\s*)?)((?:0x[0-9a-fA-F]+)(?:\+0x[0-9a-fA-F]+)?)\s*$", f, src, flags=re.M)
src=re.sub(r"^(\s*(?:tbz|tbnz)\s+w\d+,\s*#\d+,\s*)(0x[0-9a-f]+)\s*$", f, src, flags=re.M)
src=re.sub(r"^(\s*(?:cbz|cbnz)\s+x\d+,\s*)(0x[0-9a-f]+)\s*$", f, src, flags=re.M)
open(sys.argv[1]+".s","w").write(src+"\n")
open(sys.argv[1]+".sym","w").write(" ".join("--defsym=%s=0x%x"%x for x in syms))
' $name
	aarch64-linux-gnu-as -march=armv8.5-a -o $name.o $name.s || exit 1
	aarch64-linux-gnu-ld -Ttext=$addr -e 0 $(cat $name.sym) -o $name.elf $name.o || exit 1
	printf '%s:' $name
	aarch64-linux-gnu-objdump -d $name.elf | awk '/^ +[0-9a-f]+:\t/ {printf " 0x%s,", $2}'
	echo
}
FUNC=0x10000000 SLOT=0x10101c00 AT=0x10101c58 FAR=0x10300000 FSLOT=0x10301c00
BASE=0x10100000
gen plain $AT <<A
	stp x29, x30, [sp, #-32]!
	b 0x10000004
A
gen bti $AT <<A
	stp x29, x30, [sp, #-32]!
	b 0x10000008
A
gen pac $AT <<A
	paciasp
	stp x29, x30, [sp, #-32]!
	b 0x10000008
A
gen adrp $AT <<A
	adrp x0, 0x10234000
	b 0x10000004
A
gen adrp_bti $AT <<A
	adrp x1, 0x20000000
	b 0x10000008
A
gen ldr_far $AT <<A
	adrp x1, 0x10000000
	add x1, x1, #0x800
	ldr x1, [x1]
	b 0x10000004
A
gen ldr_near $AT <<A
	ldr w2, 0x10080000
	b 0x10000004
A
gen b $AT <<A
	b 0x10200000
A
gen bl $AT <<A
	adrp x30, 0x10000000
	add x30, x30, #4
	b 0x10200000
A
gen cbz $AT <<A
	cbnz x0, 0x10101c60
	b 0x10000040
	b 0x10000004
A
gen tbnz_pac $AT <<A
	paciasp
	tbz w3, #5, 0x10101c64
	b 0x10000020
	b 0x10000008
A
gen bne $AT <<A
	b.eq 0x10101c60
	b 0x10000020
	b 0x10000004
A
gen ldr_q $AT <<A
	adrp x16, 0x10001000
	add x16, x16, #0
	ldr q0, [x16]
	b 0x10000004
A
gen adr $AT <<A
	adrp x0, 0x10000000
	add x0, x0, #0x100
	b 0x10000004
A
gen pibsp_ldrsw $AT <<A
	pacibsp
	ldrsw x5, 0x10080100
	b 0x10000008
A
# originals: each at FUNC, or at FUNC + 4 after a landing pad
one() { n=$1 a=$2; shift 2; printf '\t%s\n' "$*" | gen "$n" "$a"; }
one o_stp $FUNC 'stp x29, x30, [sp, #-32]!'
one o_adrp $FUNC 'adrp x0, 0x10234000'
one o_ldrx $FUNC 'ldr x1, 0x10000800'
one o_ldrw $FUNC 'ldr w2, 0x10080000'
one o_b $FUNC 'b 0x10200000'
one o_bl $FUNC 'bl 0x10200000'
one o_cbz $FUNC 'cbz x0, 0x10000040'
one o_bne $FUNC 'b.ne 0x10000020'
one o_ldrq $FUNC 'ldr q0, 0x10001000'
one o_adr $FUNC 'adr x0, 0x10000100'
one o_adrp4 0x10000004 'adrp x1, 0x20000000'
one o_tbnz4 0x10000004 'tbnz w3, #5, 0x10000020'
one o_ldrsw4 0x10000004 'ldrsw x5, 0x10080100'
gen o_misc $FUNC <<A
	paciasp
	pacibsp
	bti c
	bti j
	bti jc
	bti
	hint #34
	paciaz
	ldxr x0, [x1]
	stxr w2, x0, [x1]
	ldaxp x0, x1, [x2]
	brk #0
	blraa x0, x1
	udf #0
	casp x0, x1, x2, x3, [x4]
	ldar x0, [x1]
	ret
	nop
	xpaclri
A
# glue
gen g_entry $SLOT <<A
	xpaclri
	stp x0, x1, [sp, #-80]!
	stp x2, x3, [sp, #16]
	stp x4, x5, [sp, #32]
	stp x6, x7, [sp, #48]
	stp x8, x30, [sp, #64]
	movz w9, #3
	movk w9, #0x800, lsl #16
	bl $BASE+0x100
	ldp x8, x30, [sp, #64]
	ldp x6, x7, [sp, #48]
	ldp x4, x5, [sp, #32]
	ldp x2, x3, [sp, #16]
	ldp x0, x1, [sp], #80
	b $SLOT+0x58
A
gen g_result_pf $SLOT <<A
	xpaclri
	movz w9, #5
	movk w9, #1, lsl #16
	adr x10, $SLOT
	b $BASE+0x300
	brk #0
	stp x0, x1, [sp, #-80]!
	stp x2, x3, [sp, #16]
	stp x4, x5, [sp, #32]
	stp x6, x7, [sp, #48]
	stp x8, x30, [sp, #64]
	bl $SLOT+0x58
	movz w9, #5
	movk w9, #1, lsl #16
	b $BASE
A
gen g_free_far $FSLOT <<A
	xpaclri
	movz w9, #7
	movk w9, #0x2000, lsl #16
	adr x10, $FSLOT
	ldr x16, $FAR+0x30
	br x16
	stp x0, x1, [sp, #-80]!
	stp x2, x3, [sp, #16]
	stp x4, x5, [sp, #32]
	stp x6, x7, [sp, #48]
	stp x8, x30, [sp, #64]
	movz w9, #7
	movk w9, #0x2000, lsl #16
	ldr x16, $FAR+0x18
	blr x16
	ldp x8, x30, [sp, #64]
	ldp x6, x7, [sp, #48]
	ldp x4, x5, [sp, #32]
	ldp x2, x3, [sp, #16]
	ldp x0, x1, [sp], #80
	b $FSLOT+0x58
A
gen g_sync $SLOT <<A
	xpaclri
	stp x0, x1, [sp, #-80]!
	stp x2, x3, [sp, #16]
	stp x4, x5, [sp, #32]
	stp x6, x7, [sp, #48]
	stp x8, x30, [sp, #64]
	movz w9, #9
	movk w9, #0, lsl #16
	bl $BASE+0x200
	ldp x8, x30, [sp, #64]
	ldp x6, x7, [sp, #48]
	ldp x4, x5, [sp, #32]
	ldp x2, x3, [sp, #16]
	ldp x0, x1, [sp], #80
	b $SLOT+0x58
A
gen patch 0x10000004 <<A
	b $SLOT
A
