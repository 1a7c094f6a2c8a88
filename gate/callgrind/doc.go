// Package callgrind reads what valgrind --tool=callgrind writes and turns it
// into the cost tier's figures: each function's own instructions (Parse),
// the documented filter that leaves out the functions whose cost follows the
// clock rather than the requests (KeptFunctions), and which functions a
// difference between two counts is made of (TopDeltas). It is pure: it runs
// nothing (gate/valgrind probes valgrind, and package gate runs it).
package callgrind
