package http1

// Byte classes, as lookup tables because they are consulted for every byte
// of a request on the hot path.
var (
	isTokenChar  [256]bool // RFC 9110 tchar
	isTargetChar [256]bool // visible ASCII: no controls, no space, no obs-text
	isValueChar  [256]bool // field-vchar, SP, HTAB, obs-text
	hexValue     [256]int8 // -1 for non-hex
)

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		isTokenChar[c] = isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'z') ||
			(b != 0 && indexOf("!#$%&'*+-.^_`|~", b))
		isTargetChar[c] = c > 0x20 && c < 0x7f
		isValueChar[c] = c == '\t' || (c >= 0x20 && c != 0x7f)
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
