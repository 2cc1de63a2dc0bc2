//go:build !purego

#include "textflag.h"

// func biasActAVX2(x, bias, y *float32, groups int, relu bool)
//
// Eight elements a group: v = x (+ bias), then with relu max(0, v) with v
// as the instruction's second source (returned when v is NaN, or for
// either zero) plus +0 (-0 becomes +0, as Go's max gives).
TEXT ·biasActAVX2(SB), NOSPLIT, $0-33
	MOVQ   x+0(FP), SI
	MOVQ   bias+8(FP), BX
	MOVQ   y+16(FP), DI
	MOVQ   groups+24(FP), CX
	MOVBLZX relu+32(FP), DX
	VXORPS Y15, Y15, Y15
	TESTQ  BX, BX
	JZ     reluonly

	TESTL DX, DX
	JZ    biasonly

biasrelu:
	VMOVUPS (SI), Y0
	VADDPS  (BX), Y0, Y0
	VMAXPS  Y0, Y15, Y0
	VADDPS  Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     biasrelu
	VZEROUPPER
	RET

biasonly:
	VMOVUPS (SI), Y0
	VADDPS  (BX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, BX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     biasonly
	VZEROUPPER
	RET

reluonly:
	VMOVUPS (SI), Y0
	VMAXPS  Y0, Y15, Y0
	VADDPS  Y15, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     reluonly
	VZEROUPPER
	RET
