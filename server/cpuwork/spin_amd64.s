//go:build !purego

#include "textflag.h"

// func spinLoop(n int)
// A DEC/JNZ loop: one loop-carried dependency per iteration, no memory
// traffic, so its cost is linear in n and stable across compilers.
TEXT ·spinLoop(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	DECQ CX
	JNZ loop
done:
	RET
