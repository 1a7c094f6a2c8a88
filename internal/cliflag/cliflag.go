// Package cliflag parses a command's flags the way every command of the
// tree reports them: -h prints the usage, a refused flag is one line
// naming it and pointing to -h (the flag package prints the whole usage,
// 17 to 103 lines, before its own message).
package cliflag

import (
	"errors"
	"flag"
	"io"
	"strings"
)

// ErrUsage wraps every refusal Parse returns: the command line is wrong
// (exit status 2).
var ErrUsage = errors.New("usage")

// Parse parses args into fs. On -h or --help it prints fs's usage and
// returns flag.ErrHelp; on a refused flag it prints nothing and returns
// one line, wrapping ErrUsage, that names the flag and says to see -h.
func Parse(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // the flag package calls it on every error
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	}
	return usageError{msg: oneLine(err)}
}

// usageError is a refused flag's line; it is ErrUsage.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == ErrUsage }

// oneLine is the flag package's error as one line pointing to -h.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ") + " (see -h)"
}
