/*
 * stack-symtest-labels.S - symbols that make libdwfl's choice of a name
 * depend on more than the closest start (stack-symbolize names): a
 * function inside another, a sizeless label after one, a local and a
 * weak function, an object over code.  Never called.
 */
	.text
	.p2align 4
	.globl	symtest_outer
	.type	symtest_outer, @function
symtest_outer:
	.fill	16, 1, 0x90
	.globl	symtest_inner
	.type	symtest_inner, @function
symtest_inner:
	.fill	8, 1, 0x90
	.size	symtest_inner, 8
	.fill	40, 1, 0x90
	.size	symtest_outer, 64
	.globl	symtest_label
symtest_label:
	.fill	16, 1, 0x90
	.type	symtest_local, @function
symtest_local:
	.fill	16, 1, 0x90
	.size	symtest_local, 16
	.weak	symtest_weak
	.type	symtest_weak, @function
symtest_weak:
	.globl	symtest_object
	.type	symtest_object, @object
symtest_object:
	.fill	16, 1, 0x90
	.size	symtest_weak, 16
	.size	symtest_object, 24
	.type	symtest_local_label, @notype
symtest_local_label:
	.fill	16, 1, 0xc3
	.globl	symtest_labels_end
	.type	symtest_labels_end, @function
symtest_labels_end:
	ret
	.size	symtest_labels_end, 1
	.section .note.GNU-stack, "", @progbits
