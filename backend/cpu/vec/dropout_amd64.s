//go:build !purego

#include "textflag.h"

// func dropAVX2(y *float32, words *uint32, mask *uint8, groups int, thr uint32, scale float32, keepAll uint32)
//
// Eight elements a group: dropped = (thr > word) as unsigned (both offset
// by 2^31 for the signed compare); y = ~dropped & y·scale; mask = ~dropped
// & (y > 0 | keepAll), packed from dwords to bytes of 0 or 1.
TEXT ·dropAVX2(SB), NOSPLIT, $0-44
	MOVQ         y+0(FP), DI
	MOVQ         words+8(FP), SI
	MOVQ         mask+16(FP), DX
	MOVQ         groups+24(FP), CX
	MOVL         $0x80000000, AX
	VMOVD        AX, X9
	VPBROADCASTD X9, Y9
	MOVL         thr+32(FP), AX
	VMOVD        AX, X8
	VPBROADCASTD X8, Y8
	VPXOR        Y9, Y8, Y8
	VBROADCASTSS scale+36(FP), Y10
	MOVL         keepAll+40(FP), AX
	VMOVD        AX, X11
	VPBROADCASTD X11, Y11
	VPXOR        Y12, Y12, Y12

loop:
	VMOVDQU   (SI), Y0
	VPXOR     Y9, Y0, Y0
	VPCMPGTD  Y0, Y8, Y1
	VMULPS    (DI), Y10, Y2
	VPANDN    Y2, Y1, Y3
	VMOVDQU   Y3, (DI)
	VCMPPS    $0x1e, Y12, Y3, Y4
	VPOR      Y11, Y4, Y4
	VPANDN    Y4, Y1, Y4
	VPSRLD    $31, Y4, Y4
	VPACKUSDW Y4, Y4, Y4
	VPERMQ    $0x08, Y4, Y4
	VPACKUSWB X4, X4, X4
	VMOVQ     X4, (DX)

	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $8, DX
	DECQ CX
	JNZ  loop
	VZEROUPPER
	RET
