// Package jsonfile is the tree's one writer of JSON documents: indented by
// two spaces, with a final newline, the form every artifact, result and
// baseline of the harness is written in (and diffs cleanly).
package jsonfile

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Marshal is v as indented JSON with a final newline.
func Marshal(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return append(data, '\n'), nil
}

// Write writes v to w as indented JSON with a final newline.
func Write(w io.Writer, v any) error {
	data, err := Marshal(v)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// WriteFile writes v to path (mode 0644) as indented JSON with a final
// newline. Nothing is written when v cannot be encoded. The error names
// the path.
func WriteFile(path string, v any) error {
	data, err := Marshal(v)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// WriteFileAtomic is WriteFile through a temporary file in path's
// directory renamed over path, so that a reader (or a writer interrupted
// mid-way) never sees half a document: path holds the old document or the
// new one.
func WriteFileAtomic(path string, v any) error {
	data, err := Marshal(v)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
