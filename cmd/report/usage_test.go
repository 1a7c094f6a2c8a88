package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"weaseldb/internal/cliflag"
)

// An unknown flag prints no usage: main says the one line run returns
// ("report: ..."), naming the flag and pointing to -h, and exits 2; every
// subcommand alike.
func TestUnknownFlagOneLine(t *testing.T) {
	for _, args := range [][]string{{"--bogus"}, {"setups", "--bogus"}, {"manifest", "--bogus"}, {"check", "--bogus"}, {"wait-strategies", "--bogus"}, {"progress", "--bogus"}} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, &out, &errOut)
		if !errors.Is(err, cliflag.ErrUsage) || errOut.Len() != 0 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "-bogus") {
			t.Errorf("%q: err %v, stderr %q: want one line naming -bogus (ErrUsage) and nothing printed", args, err, errOut.String())
		}
	}
}
