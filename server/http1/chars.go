package http1

import "encoding/binary"

// Byte classes, as lookup tables because they are consulted for every byte
// of a request on the hot path.
var (
	isTokenChar  [256]bool // RFC 9110 tchar
	isTargetChar [256]bool // visible ASCII: no controls, no space, no obs-text
	isValueChar  [256]bool // field-vchar, SP, HTAB, obs-text
	hexValue     [256]int8 // -1 for non-hex
	// targetClass sorts target bytes for the one-pass head reader: a byte
	// that ends the target (isTargetChar false), '?', or any other.
	targetClass [256]uint8
)

const (
	targetStop = iota
	targetPlain
	targetQuestion
)

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		isTokenChar[c] = isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'z') ||
			(b != 0 && indexOf("!#$%&'*+-.^_`|~", b))
		isTargetChar[c] = c > 0x20 && c < 0x7f
		isValueChar[c] = c == '\t' || (c >= 0x20 && c != 0x7f)
		switch {
		case !isTargetChar[c]:
			targetClass[c] = targetStop
		case c == '?':
			targetClass[c] = targetQuestion
		default:
			targetClass[c] = targetPlain
		}
		switch {
		case isDigit(b):
			hexValue[c] = int8(c - '0')
		case b|0x20 >= 'a' && b|0x20 <= 'f':
			hexValue[c] = int8(b|0x20-'a') + 10
		default:
			hexValue[c] = -1
		}
	}
}

func indexOf(s string, b byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// equalFold compares b with lower, which must be lowercase ASCII, ignoring
// ASCII case in b.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFoldAny compares b and s ignoring ASCII case in both.
func equalFoldAny(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// foldEquals reports whether b equals lower ignoring ASCII case in b, a
// word at a time. lower must hold only lowercase letters, digits and '-',
// and b be a validated token or field value (no control byte but HTAB):
// OR-ing 0x20 into a byte then maps onto lower's bytes only the same byte,
// its uppercase letter, or a control byte (0x10-0x19 onto a digit, CR onto
// '-') that b cannot hold.
func foldEquals(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])|0x2020202020202020 != stringWord64(lower[i:]) {
			return false
		}
	}
	if i+4 <= len(b) {
		if binary.LittleEndian.Uint32(b[i:])|0x20202020 != stringWord32(lower[i:]) {
			return false
		}
		i += 4
	}
	for ; i < len(b); i++ {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// stringWord64 and stringWord32 read the first bytes of s as a
// little-endian word (the compiler merges the loads).
func stringWord64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func stringWord32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}
