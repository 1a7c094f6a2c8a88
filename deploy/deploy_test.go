package deploy

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"weaseldb/internal/syncbuf"
	"weaseldb/loadtester/result"
)

// job is the part of a batch/v1 Job that the recipe depends on.
type job struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Parallelism    *int   `yaml:"parallelism"`
		BackoffLimit   *int   `yaml:"backoffLimit"`
		Template       struct {
			Spec struct {
				RestartPolicy string      `yaml:"restartPolicy"`
				Containers    []container `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type container struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
}

const manifest = "kubernetes/load-tester-job.yaml"

// The manifest is a valid YAML Job whose fields make the recipe work: an
// Indexed Job with every pod running at once and none retried, the start
// time passed to every pod, the completion index in each instance's name,
// and arguments load_tester accepts, without --json (the entrypoint adds
// it and prints the result to the log, where collect.sh finds it).
func TestJobManifest(t *testing.T) {
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var j job
	if err := yaml.Unmarshal(data, &j); err != nil {
		t.Fatalf("%s: %v", manifest, err)
	}
	check := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf(manifest+": "+format, args...)
		}
	}
	check(j.APIVersion == "batch/v1" && j.Kind == "Job", "apiVersion %q kind %q, want batch/v1 Job", j.APIVersion, j.Kind)
	check(j.Metadata.Name == "load-tester", "name %q: collect.sh defaults to load-tester", j.Metadata.Name)
	s := j.Spec
	check(s.CompletionMode == "Indexed", "completionMode %q, want Indexed", s.CompletionMode)
	check(s.Completions != nil && *s.Completions >= 1, "completions unset")
	check(s.Completions != nil && s.Parallelism != nil && *s.Parallelism == *s.Completions,
		"parallelism must equal completions: every instance runs at START_AT")
	check(s.BackoffLimit != nil && *s.BackoffLimit == 0, "backoffLimit must be 0: a retried pod misses START_AT")
	check(s.Template.Spec.RestartPolicy == "Never", "restartPolicy %q, want Never", s.Template.Spec.RestartPolicy)
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	check(len(c.Command) == 0, "command %v would replace the image's entrypoint (run-instance.sh), which prints the result to the log", c.Command)
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			env[e.Name] = "fieldRef:" + e.ValueFrom.FieldRef.FieldPath
		default:
			env[e.Name] = e.Value
		}
	}
	check(env["START_AT"] == "__START_AT__", "env START_AT %q, want the placeholder the doc's sed replaces", env["START_AT"])
	check(env["JOB_COMPLETION_INDEX"] == "fieldRef:metadata.annotations['batch.kubernetes.io/job-completion-index']",
		"env JOB_COMPLETION_INDEX %q, want the completion-index annotation", env["JOB_COMPLETION_INDEX"])
	joined := strings.Join(c.Args, " ")
	check(strings.Contains(joined, "--start-at $(START_AT)"), "args do not pass --start-at $(START_AT): %s", joined)
	check(regexp.MustCompile(`--instance \S*\$\(JOB_COMPLETION_INDEX\)`).MatchString(joined), "the instance name does not carry $(JOB_COMPLETION_INDEX): %s", joined)
	check(!strings.Contains(joined, "--json"), "args carry --json; run-instance.sh adds it")

	// The arguments as a pod gets them, $(VAR) expanded: load_tester takes
	// them. Run against a local server, the warm-up and duration cut short,
	// it names the instance and opens the window at START_AT.
	// The binary is built first: START_AT must still lie ahead when it
	// starts, and a build on a loaded machine took longer than the lead
	// (a make test run failed with "already past").
	var lt string
	if !testing.Short() {
		lt = buildLoadTester(t)
	}
	values := map[string]string{"START_AT": time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano), "JOB_COMPLETION_INDEX": "2"}
	if !testing.Short() {
		values["TARGET_URL"] = okServer(t)
	}
	for k, v := range env {
		if _, set := values[k]; !set {
			values[k] = v
		}
	}
	expand := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = expand.ReplaceAllStringFunc(a, func(m string) string { return values[m[2:len(m)-1]] })
	}
	if !testing.Short() {
		resultPath := filepath.Join(t.TempDir(), "result.json")
		out, err := run(t, nil, lt, append(args, "--warmup", "0", "--duration", "0.2", "--json", resultPath)...)
		r, rerr := result.ReadResult(resultPath)
		if err != nil || rerr != nil {
			t.Fatalf("load_tester refuses the manifest's arguments: %v, %v\n%s", err, rerr, out)
		}
		check(r.Instance == "load-tester-2" && r.WindowStart == values["START_AT"], "instance %q window start %s, want load-tester-2 at %s", r.Instance, r.WindowStart, values["START_AT"])
	}

	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	check(strings.Contains(string(dockerfile), `ENTRYPOINT ["/usr/local/bin/run-instance.sh"]`), "the image's entrypoint is not run-instance.sh")
}

// The markers between which run-instance.sh prints the result are the ones
// collect.sh looks for.
func TestResultMarkersAgree(t *testing.T) {
	entry, err := os.ReadFile("run-instance.sh")
	if err != nil {
		t.Fatal(err)
	}
	collect, err := os.ReadFile("kubernetes/collect.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"----- BEGIN load_tester result -----", "----- END load_tester result -----"} {
		if !bytes.Contains(entry, []byte(m)) || !bytes.Contains(collect, []byte(m)) {
			t.Errorf("marker %q is not in both run-instance.sh and collect.sh", m)
		}
	}
}

// buildLoadTester builds cmd/load_tester for the recipes to run.
func buildLoadTester(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds load_tester")
	}
	bin := filepath.Join(t.TempDir(), "load_tester")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "weaseldb/cmd/load_tester").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// okServer serves /ok on a loopback port for the duration of the test.
func okServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"ok"}`))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/ok"
}

func run(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The Kubernetes collection path without a cluster: instances run through
// the image's entrypoint as pods would, their output stands in for the pod
// logs, and collect.sh, talking to a kubectl that replays those logs,
// extracts every result and merges them.
func TestCollectMergesThePodLogs(t *testing.T) {
	bin := buildLoadTester(t)
	url := okServer(t)
	dir := t.TempDir()
	start := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	type pod struct {
		cmd *exec.Cmd
		log *os.File
	}
	var pods []pod
	for i := range 3 {
		log, err := os.Create(filepath.Join(dir, fmt.Sprintf("load-tester-%d-x.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		cmd := exec.Command("./run-instance.sh", "--url", url, "--start-at", start, "--instance",
			fmt.Sprintf("load-tester-%d", i), "--concurrency", "2", "--warmup", "0.3", "--duration", "1",
			"--stats-interval", "0.5", "--quiet")
		cmd.Env = append(os.Environ(), "LOAD_TESTER="+bin, "RESULT_DIR="+filepath.Join(dir, fmt.Sprint(i)))
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, pod{cmd, log})
	}
	for i, p := range pods {
		if err := p.cmd.Wait(); err != nil {
			data, _ := os.ReadFile(p.log.Name())
			t.Fatalf("pod %d: %v\n%s", i, err, data)
		}
	}
	kubectl := filepath.Join(dir, "kubectl")
	script := `#!/bin/sh
# replays the pods' logs: wait, get pods -l job-name=J -o name, logs pod/NAME
case "$1" in
wait) exit 0 ;;
get) for f in "` + dir + `"/*.log; do n=$(basename "$f" .log); echo "pod/$n"; done ;;
logs) cat "` + dir + `/${2#pod/}.log" ;;
*) echo "fake kubectl: $*" >&2; exit 1 ;;
esac
`
	if err := os.WriteFile(kubectl, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	out, err := run(t, []string{"KUBECTL=" + kubectl, "LOAD_TESTER=" + bin}, "./kubernetes/collect.sh", "load-tester", results)
	if err != nil {
		t.Fatalf("collect.sh: %v\n%s", err, out)
	}
	merged, err := result.ReadResult(filepath.Join(results, "merged.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var requests int64
	for i := range 3 {
		r, err := result.ReadResult(filepath.Join(results, fmt.Sprintf("load-tester-%d-x.json", i)))
		if err != nil {
			t.Fatal(err)
		}
		requests += r.Requests
	}
	if len(merged.Instances) != 3 || merged.Requests != requests || requests == 0 {
		t.Errorf("merged %d instances, %d requests; the pods' results add up to %d\n%s", len(merged.Instances), merged.Requests, requests, out)
	}
	if !strings.Contains(out, "instances (3)") {
		t.Errorf("collect.sh did not print the merged summary:\n%s", out)
	}
}

// netnsLab is a server "host" and client "hosts" in network namespaces of
// their own on one bridge, so the recipes' TCP path runs between real
// addresses. Everything is removed on cleanup, failed or not.
type netnsLab struct {
	server  string   // namespace of the server
	clients []string // namespaces of the clients
	address string   // the server's address
}

func newNetnsLab(t *testing.T, clients int) *netnsLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: skipping the ssh recipe across namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2): skipping the ssh recipe across namespaces")
	}
	id := fmt.Sprintf("lt%d", os.Getpid()%100000)
	lab := &netnsLab{server: id + "-srv", address: "10.213.0.1"}
	ip := func(args ...string) error {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	var created []string
	var links []string
	t.Cleanup(func() {
		for _, l := range links { // a veth left in this namespace if setup failed half-way
			exec.Command("ip", "link", "del", l).Run()
		}
		for _, ns := range created {
			exec.Command("ip", "netns", "del", ns).Run()
		}
	})
	if err := ip("netns", "add", lab.server); err != nil {
		t.Skipf("cannot make network namespaces here (%v): skipping the ssh recipe across namespaces", err)
	}
	created = append(created, lab.server)
	steps := [][]string{
		{"-n", lab.server, "link", "set", "lo", "up"},
		{"-n", lab.server, "link", "add", "br0", "type", "bridge"},
		{"-n", lab.server, "addr", "add", lab.address + "/24", "dev", "br0"},
		{"-n", lab.server, "link", "set", "br0", "up"},
	}
	for i := range clients {
		ns := fmt.Sprintf("%s-c%d", id, i)
		veth := fmt.Sprintf("%sv%d", id, i)
		if err := ip("netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		created = append(created, ns)
		lab.clients = append(lab.clients, ns)
		if err := ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns); err != nil {
			t.Fatal(err)
		}
		links = append(links, veth)
		steps = append(steps,
			[]string{"link", "set", veth, "netns", lab.server},
			[]string{"-n", lab.server, "link", "set", veth, "master", "br0", "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
			[]string{"-n", ns, "addr", "add", fmt.Sprintf("10.213.0.%d/24", 10+i), "dev", "eth0"},
			[]string{"-n", ns, "link", "set", "eth0", "up"})
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			t.Fatal(err)
		}
	}
	return lab
}

// startServer runs weaseldb (or, when it is not built, the stall server
// answering for an hour) in the server namespace; it returns the URL.
func (lab *netnsLab) startServer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	const port = 18080
	var args []string
	if weasel, _ := filepath.Abs("../build/weaseldb"); fileExists(weasel) {
		config := filepath.Join(dir, "w.toml")
		toml := fmt.Sprintf("[server]\ninterfaces = [{ type = \"tcp\", address = %q, port = %d }]\nio_threads = 1\n", lab.address, port)
		if err := os.WriteFile(config, []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		args = []string{weasel, "--config", config}
	} else {
		t.Log("build/weaseldb not built (make build): the stall server, answering for an hour, stands in")
		bin := filepath.Join(dir, "stallserver")
		if out, err := exec.Command("go", "build", "-o", bin, "weaseldb/cmd/load_tester/internal/stallserver").CombinedOutput(); err != nil {
			t.Fatalf("go build stallserver: %v\n%s", err, out)
		}
		args = []string{bin, "--address", lab.address, "--port", fmt.Sprint(port), "--answer-for", "1h"}
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", lab.server}, args...)...)
	cmd.Dir = dir
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	// Ready when a client namespace can connect.
	deadline := time.Now().Add(10 * time.Second)
	for {
		probe := exec.Command("ip", "netns", "exec", lab.clients[0], "bash", "-c",
			fmt.Sprintf("exec 3<>/dev/tcp/%s/%d", lab.address, port))
		if probe.Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server in %s is not reachable from %s:\n%s", lab.server, lab.clients[0], out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("http://%s:%d/ok", lab.address, port)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// The ssh recipe end to end: three client "hosts" in namespaces of their
// own (an ssh stand-in runs each command inside the host's namespace)
// drive one server "host" over TCP with the same --start-at; the script
// brings the results back and merges them.
func TestSSHRecipeAcrossNetworkNamespaces(t *testing.T) {
	bin := buildLoadTester(t)
	lab := newNetnsLab(t, 3)
	url := lab.startServer(t)
	dir := t.TempDir()
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte("# the client namespaces\n"+strings.Join(lab.clients, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeSSH := filepath.Join(dir, "ssh-netns")
	if err := os.WriteFile(fakeSSH, []byte("#!/bin/sh\n# ssh HOST COMMAND: run COMMAND in the namespace HOST\nhost=$1; shift\nexec ip netns exec \"$host\" sh -c \"$*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	out, err := run(t, []string{"SSH=" + fakeSSH, "REMOTE_LOAD_TESTER=" + bin, "LOAD_TESTER=" + bin, "LEAD=3"},
		"./ssh/run.sh", hosts, results, "--url", url, "--concurrency", "4", "--warmup", "1", "--duration", "1.5",
		"--stats-interval", "0.5", "--quiet")
	if err != nil {
		t.Fatalf("ssh/run.sh: %v\n%s", err, out)
	}
	merged, err := result.ReadResult(filepath.Join(results, "merged.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var requests int64
	names := map[string]bool{}
	for _, ns := range lab.clients {
		r, err := result.ReadResult(filepath.Join(results, ns+".json"))
		if err != nil {
			t.Fatal(err)
		}
		requests += r.Requests
		names[r.Instance] = true
		if r.Errors != 0 || !r.Clean() {
			t.Errorf("%s: %d errors, unfinished %d, dropped %d", ns, r.Errors, r.Unfinished, r.Dropped)
		}
	}
	if len(merged.Instances) != 3 || merged.Requests != requests || requests == 0 || len(names) != 3 {
		t.Errorf("merged %d instances, %d requests; the hosts' results add up to %d (names %v)\n%s",
			len(merged.Instances), merged.Requests, requests, names, out)
	}
	for _, w := range merged.Warnings {
		if strings.Contains(w, "overlap") {
			t.Errorf("warning: %s", w)
		}
	}
}
