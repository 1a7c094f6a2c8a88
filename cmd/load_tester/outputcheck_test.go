package main

import (
	"bytes"
	"strings"
	"testing"
)

// An output that cannot be written (--json, --vegeta, --html) is refused
// before any load, in one line naming the flag and the path the user
// gave (never a temporary file's), exit 1: the run used to go whole, then
// fail.
func TestOutputsCheckedBeforeTheRun(t *testing.T) {
	for _, flag := range []string{"--json", "--vegeta", "--html"} {
		t.Run(flag, func(t *testing.T) {
			rec := startRecorder(t, false)
			var out, errOut bytes.Buffer
			code := run([]string{"--url", rec.url + "/ok", "--duration", "0.2", "--warmup", "0", "--quiet", flag, "/nonexistent/dir/r.out"}, &out, &errOut)
			msg := errOut.String()
			if code != exitFailure || !strings.HasPrefix(msg, "load_tester: "+flag+" /nonexistent/dir/r.out: ") || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "r.out.") {
				t.Errorf("exit %d, stderr %q: want exit 1 and one line naming %s /nonexistent/dir/r.out", code, msg, flag)
			}
			if n := len(rec.got()); n != 0 {
				t.Errorf("the server got %d requests: the load ran before the output was checked", n)
			}
		})
	}
}
