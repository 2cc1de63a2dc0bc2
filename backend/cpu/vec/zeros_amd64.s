//go:build !purego

#include "textflag.h"

// The magnitude bits of 8 float32 lanes: a lane is zero (of either sign)
// when its bits under the mask are all zero.
DATA magnitude<>+0(SB)/8, $0x7fffffff7fffffff
DATA magnitude<>+8(SB)/8, $0x7fffffff7fffffff
DATA magnitude<>+16(SB)/8, $0x7fffffff7fffffff
DATA magnitude<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL magnitude<>(SB), RODATA|NOPTR, $32

// func zeroRunAVX2(x *float32, groups int) int
TEXT ·zeroRunAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    groups+8(FP), CX
	VMOVDQU magnitude<>(SB), Y0
	XORQ    AX, AX

loop:
	CMPQ    AX, CX
	JGE     done
	VPTEST  (SI), Y0
	JNZ     done
	ADDQ    $32, SI
	INCQ    AX
	JMP     loop

done:
	VZEROUPPER
	SHLQ    $3, AX
	MOVQ    AX, ret+16(FP)
	RET
