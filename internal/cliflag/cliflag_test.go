package cliflag

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func newSet(out *bytes.Buffer) *flag.FlagSet {
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Int("n", 1, "a number")
	fs.Usage = func() { fmt.Fprintln(out, "usage: cmd [flags]"); fs.PrintDefaults() }
	return fs
}

// A refused flag prints nothing and comes back as one line naming it and
// pointing to -h, wrapping ErrUsage; -h prints the usage.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args             []string
		wantErr, wantOut string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus (see -h)", ""},
		{[]string{"-n", "x"}, `invalid value "x" for flag -n: parse error (see -h)`, ""},
		{[]string{"-n"}, "flag needs an argument: -n (see -h)", ""},
		{[]string{"-h"}, "", "usage: cmd [flags]"},
		{[]string{"-n", "2"}, "", ""},
	} {
		var out bytes.Buffer
		err := Parse(newSet(&out), tc.args)
		switch {
		case tc.wantErr != "":
			if err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrUsage) || out.Len() != 0 {
				t.Errorf("%q: err %v, output %q: want %q wrapping ErrUsage and no output", tc.args, err, out.String(), tc.wantErr)
			}
		case tc.wantOut != "":
			if !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("%q: err %v, output %q: want ErrHelp and the usage", tc.args, err, out.String())
			}
		default:
			if err != nil || out.Len() != 0 {
				t.Errorf("%q: err %v, output %q", tc.args, err, out.String())
			}
		}
	}
}
