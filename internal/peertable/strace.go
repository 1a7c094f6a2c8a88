package peertable

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// StraceTotal reads the system calls counted in an `strace -c` summary:
// the "calls" column of its "total" line.
func StraceTotal(r io.Reader) (float64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[len(f)-1] != "total" {
			continue
		}
		// "100.00 0.012 3 4012 17 total": calls is the 4th column; the
		// errors column is empty when there were none.
		n, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			return 0, fmt.Errorf("peertable: strace total line %q: %w", sc.Text(), err)
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("peertable: strace summary: %w", err)
	}
	return 0, fmt.Errorf("peertable: no total line in the strace summary")
}
