//go:build !purego

#include "textflag.h"

// func spinLoop(n int)
// A SUBS/BNE loop: one loop-carried dependency per iteration, no memory
// traffic, so its cost is linear in n and stable across compilers.
TEXT ·spinLoop(SB), NOSPLIT, $0-8
	MOVD n+0(FP), R0
	CMP $0, R0
	BLE done
loop:
	SUBS $1, R0, R0
	BNE loop
done:
	RET
