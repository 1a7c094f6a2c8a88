package serverproc

// Who owns what: os/exec runs one copying goroutine per stream (stdout,
// stderr); each writes into its own lineWriter, which hands complete lines
// to the shared output under output.mu. Readers (Tail, Listeners, lastLine)
// take the same lock.

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// maxLine bounds a line kept in memory: a longer one is cut into pieces.
const maxLine = 4096

// output collects a process's lines: the last few for error messages, the
// stdout lines up to the ready line (the listeners, GOMAXPROCS), and a copy
// of everything to an optional log.
type output struct {
	readyLine string
	ready     chan struct{} // closed at the first stdout line containing readyLine
	log       io.Writer

	mu       sync.Mutex
	max      int
	tail     []string
	startup  []string // stdout lines before (and including) the ready line
	isReady  bool
	partials []*lineWriter
}

func newOutput(max int, readyLine string, log io.Writer) *output {
	return &output{readyLine: readyLine, ready: make(chan struct{}), log: log, max: max}
}

// stream returns the writer for stdout (ready line detection) or stderr.
func (o *output) stream(stdout bool) *lineWriter {
	w := &lineWriter{o: o, stdout: stdout}
	o.mu.Lock()
	o.partials = append(o.partials, w)
	o.mu.Unlock()
	return w
}

func (o *output) addLocked(line string, stdout bool) {
	if o.log != nil {
		_, _ = io.WriteString(o.log, line+"\n")
	}
	if stdout && !o.isReady {
		o.startup = append(o.startup, line)
		if strings.Contains(line, o.readyLine) {
			o.isReady = true
			close(o.ready)
		}
	}
	if strings.TrimSpace(line) == "" {
		return
	}
	o.tail = append(o.tail, line)
	if len(o.tail) > o.max {
		o.tail = o.tail[len(o.tail)-o.max:]
	}
}

// flush adds what is left of unterminated last lines, once the streams
// are closed.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, w := range o.partials {
		if len(w.partial) > 0 {
			o.addLocked(string(w.partial), w.stdout)
			w.partial = nil
		}
	}
}

func (o *output) startupLines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.startup...)
}

func (o *output) tailLines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.tail...)
}

// lastLine is ": <last output line>" (cut at 200 bytes) or "".
func (o *output) lastLine() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	last := ""
	for _, w := range o.partials {
		if p := strings.TrimSpace(string(w.partial)); p != "" {
			last = p
		}
	}
	if last == "" && len(o.tail) > 0 {
		last = o.tail[len(o.tail)-1]
	}
	if last == "" {
		return ""
	}
	if len(last) > 200 {
		last = last[:200] + "..."
	}
	return ": " + strings.TrimSpace(last)
}

// lineWriter splits one stream into lines.
type lineWriter struct {
	o       *output
	stdout  bool
	partial []byte // guarded by o.mu
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.o.mu.Lock()
	defer w.o.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.o.addLocked(strings.TrimSuffix(string(w.partial[:i]), "\r"), w.stdout)
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxLine {
		w.o.addLocked(string(w.partial), w.stdout)
		w.partial = nil
	}
	return len(p), nil
}
