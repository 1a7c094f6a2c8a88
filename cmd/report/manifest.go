package main

import (
	"errors"
	"fmt"
	"io"

	"weaseldb/bench"
)

// manifest is `report manifest`: the run's machine, config and steps.
func manifest(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report manifest", stderr)
	var o bench.ManifestOptions
	runDir := fs.String("run", "", "run directory")
	fs.StringVar(&o.Config, "config", "", "the TOML config the seed's servers read")
	fs.StringVar(&o.ConfigSource, "config-source", "", "the config it was adjusted from, if any")
	fs.StringVar(&o.Steps, "steps", "", "the script's step log (name, exit, wall s, command; tab-separated)")
	fs.Float64Var(&o.DurationS, "duration", 0, "requested load duration in seconds")
	fs.BoolVar(&o.Quick, "quick", false, "bench_pipeline ran with --quick")
	fs.StringVar(&o.Nofile, "nofile", "", "the open-files limit the run had")
	fs.StringVar(&o.StartedAt, "started", "", "when the run started (RFC 3339)")
	fs.StringVar(&o.VirtualAccel, "virtual", "", "the run's CPUs were a QEMU guest's, run with this accelerator (tcg: emulated, kvm); the report then renders it as a functional check")
	fs.IntVar(&o.HostCPUs, "host-cpus", 0, "with --virtual: the host's CPU count")
	fs.StringVar(&o.HostCPUModel, "host-cpu-model", "", "with --virtual: the host's CPU model")
	fs.StringVar(&o.Revision, "revision", "", "the source revision the binaries were built from (git rev-parse HEAD)")
	fs.StringVar(&o.Describe, "describe", "", "its git describe --always --dirty")
	fs.BoolVar(&o.Dirty, "dirty", false, "the work tree had uncommitted changes when the binaries were built")
	fs.StringVar(&o.BuildCommand, "build-command", "", "the command that built the binaries (or why none ran)")
	fs.StringVar(&o.Root, "root", "", "the repository root the config and step paths are under (absolute)")
	out := fs.String("out", "", "manifest to write (default RUN/manifest.json)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *runDir == "" || o.Config == "" || o.Steps == "" {
		fs.Usage()
		return errors.New("manifest needs --run, --config and --steps")
	}
	path, err := bench.WriteManifest(*runDir, *out, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: wrote %s\n", path)
	return nil
}
