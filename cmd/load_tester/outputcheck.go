package main

import (
	"errors"
	"fmt"
	"io/fs"
)

// checkOutputs refuses, before any load, an output file that cannot be
// created (--json, --vegeta, --html): a run of minutes must not end in
// "cannot write". The error names the flag and the path as given, never
// the probe's temporary file.
func checkOutputs(o options) error {
	for _, out := range []struct{ flag, path string }{{"--json", o.jsonPath}, {"--vegeta", o.vegeta}, {"--html", o.html}} {
		if out.path == "" || out.path == "-" {
			continue
		}
		if err := checkWritable(out.path); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("%s %s: cannot create it: %w", out.flag, out.path, err)
		}
	}
	return nil
}
