package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"weaseldb/internal/jsonfile"
	"weaseldb/internal/peertable"
	"weaseldb/internal/procstat"
)

// files is a repeatable flag.
type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// runTable writes peers.json and peers.md from the samples, and splices the
// markdown into each --splice document.
func runTable(args []string) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	samples := fs.String("samples", "", "the script's samples, JSON lines")
	jsonOut := fs.String("json", "peers.json", "where the table goes as JSON")
	mdOut := fs.String("md", "peers.md", "where the table goes as markdown")
	rounds := fs.Int("rounds", 0, "rounds the script ran")
	duration := fs.Float64("duration", 0, "seconds a run")
	setup := fs.String("setup", "", "how the script ran, in its words (pinning, connections, rate)")
	rate := fs.Float64("rate", 0, "the open loop's rate in req/s, which both clients must hold for its goals (0: not checked)")
	target := fs.String("client-target", peertable.TargetNginx, "the server the plain client rows ran against: nginx or weaseldb")
	var splice files
	fs.Var(&splice, "splice", "a document whose peers markers get the markdown (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *samples == "" {
		return errors.New("--samples is required")
	}
	if *target != peertable.TargetNginx && *target != peertable.TargetWeaseldb {
		return fmt.Errorf("--client-target %q: want nginx or weaseldb", *target)
	}
	f, err := os.Open(*samples)
	if err != nil {
		return err
	}
	defer f.Close()
	ss, err := peertable.ReadSamples(f)
	if err != nil {
		return err
	}
	run := peertable.Run{Date: time.Now().UTC().Format("2006-01-02"), Rounds: *rounds, DurationS: *duration, Setup: *setup, ClientTarget: *target, RateRPS: *rate}
	t, err := peertable.Build(ss, machine(), run)
	if err != nil {
		return err
	}
	if err := jsonfile.WriteFile(*jsonOut, t); err != nil {
		return err
	}
	md := peertable.Markdown(t)
	if err := os.WriteFile(*mdOut, []byte(md), 0o644); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	return spliceAll(splice, md)
}

// runPlaceholder puts the placeholder between each document's markers.
func runPlaceholder(args []string) error {
	fs := flag.NewFlagSet("placeholder", flag.ContinueOnError)
	var splice files
	fs.Var(&splice, "splice", "a document whose peers markers get the placeholder (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	return spliceAll(splice, peertable.Placeholder)
}

func spliceAll(docs []string, content string) error {
	for _, path := range docs {
		doc, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out, err := peertable.Splice(doc, content)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// machine names this machine: CPU model and family, CPUs, kernel, and the
// Go that built this program (the script builds every peer with the same).
func machine() peertable.Machine {
	m := peertable.Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if n, err := procstat.MachineCPUs(); err == nil && n > 0 {
		m.CPUs = n
	}
	if n, err := procstat.ReadCPUName(); err == nil {
		m.CPUModel, m.CPUFamily = n.Model, n.Family
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return m
}
