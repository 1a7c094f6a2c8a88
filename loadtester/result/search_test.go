package result

import (
	"strings"
	"testing"
)

func TestSearchSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*SearchSpec)
		want string
	}{
		{"defaults", func(*SearchSpec) {}, ""},
		{"even repeats", func(s *SearchSpec) { s.Repeats = 2 }, "--find-rate-repeats 2"},
		{"factor", func(s *SearchSpec) { s.Factor = 1 }, "--find-rate-factor"},
		{"precision", func(s *SearchSpec) { s.Precision = 0 }, "--find-rate-precision"},
		{"max under start", func(s *SearchSpec) { s.Max = 10 }, "--find-rate-max"},
		{"min over start", func(s *SearchSpec) { s.Min = 1e6 }, "--find-rate-min"},
		{"steps", func(s *SearchSpec) { s.MaxSteps = 0 }, "--find-rate-steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSearchSpec()
			tt.edit(&s)
			err := s.Validate()
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err %v, want one naming %q", err, tt.want)
			}
		})
	}
}
