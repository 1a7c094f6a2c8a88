// Package arrival says when an open loop's requests fall due: the target
// rate over time (a constant, or k6-style stages ramping linearly from one
// target to the next) and the arrival process (evenly spaced, or Poisson
// from a seeded generator), combined into each network thread's schedule.
//
// Pure: no clock, no I/O. A schedule is a function from a request's index
// to its intended send time (ns from the schedule's origin) and back, so
// the engine can count the requests due in any stretch of time (the tail
// accounting of a window) without having sent them.
//
// How the two combine: the rate profile's cumulative count Λ(t) (requests
// due by t) maps time to "count space"; an arrival process places its
// points in count space at unit rate (evenly: 0, 1, 2, ...; Poisson:
// sums of Exp(1) draws), and Λ⁻¹ maps them back to time. That is the
// standard time change of a Poisson process, so a ramp with Poisson
// arrivals is an inhomogeneous Poisson process of the ramp's rate. Each
// of T threads takes every T-th point of the even process (offset by its
// id) or a Poisson process of rate 1/T; together they make the whole.
package arrival
