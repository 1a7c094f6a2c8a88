package peertable

import "slices"

// Median of xs (the mean of the middle two for an even count); 0 for none.
// The table reports medians because a shared machine's outliers are one-sided
// (a neighbour's burst only ever slows a run down).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	return (s[mid-1] + s[mid]) / 2
}
