//go:build !purego

#include "textflag.h"

// Micro-kernels for a 6-row tile. acc[i][j] = Σ_p A(i, p)·B(p, j), then
// c[i][j] = alpha·acc + beta·c (c not read when beta is ±0). The packed B
// panel has rows of 32 floats (128 bytes). A is either a packed panel
// (rows of 6 floats, 24 bytes per k step) or read in place ("direct"):
// row i at a + i·lda floats.
//
// Registers: AX = A (row 0), R11 = A row 3 (direct), R8 = lda in bytes,
// BX = B, CX/DX = loop counters, DI = C, R9 = ldc in bytes.

// ---- AVX-512: 6×32 tile, accumulators Z0..Z11 (row i in Z(2i), Z(2i+1)).

#define B512(boff) \
	VMOVUPS boff(BX), Z24; \
	VMOVUPS boff+64(BX), Z25

#define R512(aaddr, lo, hi) \
	VBROADCASTSS aaddr, Z26;    \
	VFMADD231PS  Z24, Z26, lo;  \
	VFMADD231PS  Z25, Z26, hi

#define STEP512P(aoff, boff) \
	B512(boff);                      \
	R512(aoff(AX), Z0, Z1);          \
	R512(aoff+4(AX), Z2, Z3);        \
	R512(aoff+8(AX), Z4, Z5);        \
	R512(aoff+12(AX), Z6, Z7);       \
	R512(aoff+16(AX), Z8, Z9);       \
	R512(aoff+20(AX), Z10, Z11)

#define STEP512D(aoff, boff) \
	B512(boff);                      \
	R512(aoff(AX), Z0, Z1);          \
	R512(aoff(AX)(R8*1), Z2, Z3);    \
	R512(aoff(AX)(R8*2), Z4, Z5);    \
	R512(aoff(R11), Z6, Z7);         \
	R512(aoff(R11)(R8*1), Z8, Z9);   \
	R512(aoff(R11)(R8*2), Z10, Z11)

#define ZERO512 \
	VPXORD Z0, Z0, Z0;    \
	VPXORD Z1, Z1, Z1;    \
	VPXORD Z2, Z2, Z2;    \
	VPXORD Z3, Z3, Z3;    \
	VPXORD Z4, Z4, Z4;    \
	VPXORD Z5, Z5, Z5;    \
	VPXORD Z6, Z6, Z6;    \
	VPXORD Z7, Z7, Z7;    \
	VPXORD Z8, Z8, Z8;    \
	VPXORD Z9, Z9, Z9;    \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11

#define ROW0512(lo, hi) \
	VMULPS  Z26, lo, lo;  \
	VMULPS  Z26, hi, hi;  \
	VMOVUPS lo, (DI);     \
	VMOVUPS hi, 64(DI);   \
	ADDQ    R9, DI

#define ROWB512(lo, hi) \
	VMULPS      Z26, lo, lo;      \
	VMULPS      Z26, hi, hi;      \
	VFMADD231PS (DI), Z27, lo;    \
	VFMADD231PS 64(DI), Z27, hi;  \
	VMOVUPS     lo, (DI);         \
	VMOVUPS     hi, 64(DI);       \
	ADDQ        R9, DI

// STORE512 writes the tile; DI = c, R9 = ldc bytes, alpha/beta at the
// given frame addresses.
#define STORE512(alphaaddr, betaaddr) \
	VBROADCASTSS alphaaddr, Z26; \
	MOVL         betaaddr, R10;  \
	ANDL         $0x7fffffff, R10; \
	JZ           store0;         \
	VBROADCASTSS betaaddr, Z27;  \
	ROWB512(Z0, Z1);             \
	ROWB512(Z2, Z3);             \
	ROWB512(Z4, Z5);             \
	ROWB512(Z6, Z7);             \
	ROWB512(Z8, Z9);             \
	ROWB512(Z10, Z11);           \
	VZEROUPPER;                  \
	RET;                         \
store0:                              \
	ROW0512(Z0, Z1);             \
	ROW0512(Z2, Z3);             \
	ROW0512(Z4, Z5);             \
	ROW0512(Z6, Z7);             \
	ROW0512(Z8, Z9);             \
	ROW0512(Z10, Z11);           \
	VZEROUPPER;                  \
	RET

// func kernelAVX512(k int, a, b, c *float32, ldc int, alpha, beta float32)
TEXT ·kernelAVX512(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	ZERO512
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   tail

loop4:
	STEP512P(0, 0)
	STEP512P(24, 128)
	STEP512P(48, 256)
	STEP512P(72, 384)
	ADDQ $96, AX
	ADDQ $512, BX
	DECQ DX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   store

loop1:
	STEP512P(0, 0)
	ADDQ $24, AX
	ADDQ $128, BX
	DECQ CX
	JNZ  loop1

store:
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R9
	SHLQ $2, R9
	STORE512(alpha+40(FP), beta+44(FP))

// func kernelAVX512D(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)
TEXT ·kernelAVX512D(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (AX)(R8*2), R11
	ADDQ R8, R11
	MOVQ b+24(FP), BX
	ZERO512
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   tail

loop4:
	STEP512D(0, 0)
	STEP512D(4, 128)
	STEP512D(8, 256)
	STEP512D(12, 384)
	ADDQ $16, AX
	ADDQ $16, R11
	ADDQ $512, BX
	DECQ DX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   store

loop1:
	STEP512D(0, 0)
	ADDQ $4, AX
	ADDQ $4, R11
	ADDQ $128, BX
	DECQ CX
	JNZ  loop1

store:
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R9
	SHLQ $2, R9
	STORE512(alpha+48(FP), beta+52(FP))

// ---- AVX2: 6×16 tile (16 of the panel's 32 columns), accumulators
// Y0..Y11 (row i in Y(2i), Y(2i+1)).

#define B256(boff) \
	VMOVUPS boff(BX), Y12; \
	VMOVUPS boff+32(BX), Y13

#define R256(aaddr, lo, hi) \
	VBROADCASTSS aaddr, Y14;    \
	VFMADD231PS  Y12, Y14, lo;  \
	VFMADD231PS  Y13, Y14, hi

#define STEP256P(aoff, boff) \
	B256(boff);                      \
	R256(aoff(AX), Y0, Y1);          \
	R256(aoff+4(AX), Y2, Y3);        \
	R256(aoff+8(AX), Y4, Y5);        \
	R256(aoff+12(AX), Y6, Y7);       \
	R256(aoff+16(AX), Y8, Y9);       \
	R256(aoff+20(AX), Y10, Y11)

#define STEP256D(aoff, boff) \
	B256(boff);                      \
	R256(aoff(AX), Y0, Y1);          \
	R256(aoff(AX)(R8*1), Y2, Y3);    \
	R256(aoff(AX)(R8*2), Y4, Y5);    \
	R256(aoff(R11), Y6, Y7);         \
	R256(aoff(R11)(R8*1), Y8, Y9);   \
	R256(aoff(R11)(R8*2), Y10, Y11)

#define ZERO256 \
	VXORPS Y0, Y0, Y0;    \
	VXORPS Y1, Y1, Y1;    \
	VXORPS Y2, Y2, Y2;    \
	VXORPS Y3, Y3, Y3;    \
	VXORPS Y4, Y4, Y4;    \
	VXORPS Y5, Y5, Y5;    \
	VXORPS Y6, Y6, Y6;    \
	VXORPS Y7, Y7, Y7;    \
	VXORPS Y8, Y8, Y8;    \
	VXORPS Y9, Y9, Y9;    \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

#define ROW0256(lo, hi) \
	VMULPS  Y14, lo, lo;  \
	VMULPS  Y14, hi, hi;  \
	VMOVUPS lo, (DI);     \
	VMOVUPS hi, 32(DI);   \
	ADDQ    R9, DI

#define ROWB256(lo, hi) \
	VMULPS      Y14, lo, lo;      \
	VMULPS      Y14, hi, hi;      \
	VFMADD231PS (DI), Y15, lo;    \
	VFMADD231PS 32(DI), Y15, hi;  \
	VMOVUPS     lo, (DI);         \
	VMOVUPS     hi, 32(DI);       \
	ADDQ        R9, DI

#define STORE256(alphaaddr, betaaddr) \
	VBROADCASTSS alphaaddr, Y14; \
	MOVL         betaaddr, R10;  \
	ANDL         $0x7fffffff, R10; \
	JZ           store0;         \
	VBROADCASTSS betaaddr, Y15;  \
	ROWB256(Y0, Y1);             \
	ROWB256(Y2, Y3);             \
	ROWB256(Y4, Y5);             \
	ROWB256(Y6, Y7);             \
	ROWB256(Y8, Y9);             \
	ROWB256(Y10, Y11);           \
	VZEROUPPER;                  \
	RET;                         \
store0:                              \
	ROW0256(Y0, Y1);             \
	ROW0256(Y2, Y3);             \
	ROW0256(Y4, Y5);             \
	ROW0256(Y6, Y7);             \
	ROW0256(Y8, Y9);             \
	ROW0256(Y10, Y11);           \
	VZEROUPPER;                  \
	RET

// func kernelAVX2(k int, a, b, c *float32, ldc int, alpha, beta float32)
TEXT ·kernelAVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), BX
	ZERO256
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   tail

loop4:
	STEP256P(0, 0)
	STEP256P(24, 128)
	STEP256P(48, 256)
	STEP256P(72, 384)
	ADDQ $96, AX
	ADDQ $512, BX
	DECQ DX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   store

loop1:
	STEP256P(0, 0)
	ADDQ $24, AX
	ADDQ $128, BX
	DECQ CX
	JNZ  loop1

store:
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R9
	SHLQ $2, R9
	STORE256(alpha+40(FP), beta+44(FP))

// func kernelAVX2D(k int, a *float32, lda int, b, c *float32, ldc int, alpha, beta float32)
TEXT ·kernelAVX2D(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (AX)(R8*2), R11
	ADDQ R8, R11
	MOVQ b+24(FP), BX
	ZERO256
	MOVQ CX, DX
	SHRQ $2, DX
	JZ   tail

loop4:
	STEP256D(0, 0)
	STEP256D(4, 128)
	STEP256D(8, 256)
	STEP256D(12, 384)
	ADDQ $16, AX
	ADDQ $16, R11
	ADDQ $512, BX
	DECQ DX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   store

loop1:
	STEP256D(0, 0)
	ADDQ $4, AX
	ADDQ $4, R11
	ADDQ $128, BX
	DECQ CX
	JNZ  loop1

store:
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R9
	SHLQ $2, R9
	STORE256(alpha+48(FP), beta+52(FP))
