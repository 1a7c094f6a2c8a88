package main

import (
	"regexp"
	"testing"
)

// Placeholders in --url's path render as they do in --path, over HTTP/1.1
// and h2: the server gets numbers and UUIDs, never "%7B%7Bseq%7D%7D"; and
// a data column named only in the URL feeds it.
func TestURLPathPlaceholdersRender(t *testing.T) {
	protocols(t, func(t *testing.T, rec *recorder, flags []string) {
		want := regexp.MustCompile(`^/a/[0-9]+/x/[0-9]+\?u=[0-9a-f-]{36}$`)
		got := runRecorded(t, rec, append(flags, "--url", rec.url+"/a/{{seq}}/x/{{data.id}}?u={{uuid}}",
			"--data", writeCSV(t, 3), "--concurrency", "1", "--duration", "0.2")...)
		for _, s := range got {
			if !want.MatchString(s.target) {
				t.Fatalf("the server got %q, want it to match %s", s.target, want)
			}
		}
	})
}
