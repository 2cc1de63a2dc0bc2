//go:build !purego

#include "textflag.h"

DATA lanes<>+0(SB)/4, $0
DATA lanes<>+4(SB)/4, $1
DATA lanes<>+8(SB)/4, $2
DATA lanes<>+12(SB)/4, $3
DATA lanes<>+16(SB)/4, $4
DATA lanes<>+20(SB)/4, $5
DATA lanes<>+24(SB)/4, $6
DATA lanes<>+28(SB)/4, $7
GLOBL lanes<>(SB), RODATA|NOPTR, $32

// MULHILO: hi, lo = 32x32->64 products of m (broadcast) and c, per lane.
// Uses Y14, Y15 as scratch.
#define MULHILO(m, c, hi, lo) \
	VPMULLD   m, c, lo;          \
	VPMULUDQ  m, c, Y14;         \
	VPSRLQ    $32, c, Y15;       \
	VPMULUDQ  m, Y15, Y15;       \
	VPSRLQ    $32, Y14, Y14;     \
	VPBLENDD  $0xAA, Y15, Y14, hi

// ROUND: one Philox round on counters Y0..Y3 with keys Y4, Y5
// (multipliers in Y6, Y7; Y8..Y11 scratch).
#define ROUND \
	MULHILO(Y6, Y0, Y8, Y9);     \
	MULHILO(Y7, Y2, Y10, Y11);   \
	VPXOR   Y1, Y10, Y10;        \
	VPXOR   Y4, Y10, Y0;         \
	VMOVDQU Y11, Y1;             \
	VPXOR   Y3, Y8, Y8;          \
	VPXOR   Y5, Y8, Y2;          \
	VMOVDQU Y9, Y3

#define BUMP \
	VPADDD Y12, Y4, Y4; \
	VPADDD Y13, Y5, Y5

// func philoxAVX2(k0, k1, index, slot0, c2, c3 uint32, out *uint32, groups int)
//
// Every instruction that touches a vector register is VEX-encoded (VMOVD,
// not MOVL into X): a legacy SSE instruction while the upper halves of the
// Y registers are dirty costs a state transition on some processors, which
// made this loop 24 times slower (10 against 245 M blocks/s).
TEXT ·philoxAVX2(SB), NOSPLIT, $0-40
	MOVQ out+24(FP), DI
	MOVQ groups+32(FP), CX
	MOVL slot0+12(FP), DX
	MOVL index+8(FP), R8
	MOVL c2+16(FP), R9
	MOVL c3+20(FP), R10
	MOVL k0+0(FP), R11
	MOVL k1+4(FP), R12
	MOVL $0xD2511F53, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6
	MOVL $0xCD9E8D57, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x9E3779B9, AX
	VMOVD AX, X12
	VPBROADCASTD X12, Y12
	MOVL $0xBB67AE85, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13

group:
	// Counters: c0 = index, c1 = slot0 + lane, c2, c3; keys k0, k1.
	VMOVD        R8, X0
	VPBROADCASTD X0, Y0
	VMOVD        DX, X1
	VPBROADCASTD X1, Y1
	VPADDD       lanes<>(SB), Y1, Y1
	VMOVD        R9, X2
	VPBROADCASTD X2, Y2
	VMOVD        R10, X3
	VPBROADCASTD X3, Y3
	VMOVD        R11, X4
	VPBROADCASTD X4, Y4
	VMOVD        R12, X5
	VPBROADCASTD X5, Y5
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND
	BUMP
	ROUND

	// Transpose words (Y0..Y3, lane = slot) into slot-major order.
	VPUNPCKLDQ   Y1, Y0, Y8
	VPUNPCKHDQ   Y1, Y0, Y9
	VPUNPCKLDQ   Y3, Y2, Y10
	VPUNPCKHDQ   Y3, Y2, Y11
	VPUNPCKLQDQ  Y10, Y8, Y0
	VPUNPCKHQDQ  Y10, Y8, Y1
	VPUNPCKLQDQ  Y11, Y9, Y2
	VPUNPCKHQDQ  Y11, Y9, Y3
	VPERM2I128   $0x20, Y1, Y0, Y8
	VPERM2I128   $0x20, Y3, Y2, Y9
	VPERM2I128   $0x31, Y1, Y0, Y10
	VPERM2I128   $0x31, Y3, Y2, Y11
	VMOVDQU      Y8, (DI)
	VMOVDQU      Y9, 32(DI)
	VMOVDQU      Y10, 64(DI)
	VMOVDQU      Y11, 96(DI)

	ADDQ $128, DI
	ADDL $8, DX
	DECQ CX
	JNZ  group
	VZEROUPPER
	RET
