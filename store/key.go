package store

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLen is the longest key, in bytes.
const MaxKeyLen = 1024

// ValidateKey checks key against the rules every backend enforces: an
// optional leading "/" and then one or more segments separated by "/",
// each non-empty, neither "." nor "..", in valid UTF-8 without control
// characters, MaxKeyLen bytes at most. A key never ends in "/": a name
// ending in "/" is a prefix (a directory), see ValidatePrefix.
// The error wraps ErrInvalidKey and names the key.
func ValidateKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > MaxKeyLen {
		return fmt.Errorf("%w: key %.40q... is %d bytes long, more than %d", ErrInvalidKey, key, len(key), MaxKeyLen)
	}
	if !utf8.ValidString(key) {
		return fmt.Errorf("%w: key %q is not valid UTF-8", ErrInvalidKey, key)
	}
	if strings.IndexFunc(key, unicode.IsControl) >= 0 {
		return fmt.Errorf("%w: key %q holds a control character", ErrInvalidKey, key)
	}
	for i, seg := range strings.Split(strings.TrimPrefix(key, "/"), "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: key %q has an empty segment (%d)", ErrInvalidKey, key, i+1)
		case ".", "..":
			return fmt.Errorf("%w: key %q has a %q segment", ErrInvalidKey, key, seg)
		}
	}
	return nil
}

// ValidatePrefix checks a List or Watch prefix and returns it as the
// directory it stands for, ending in "/". Prefixes are directories:
// "a/b" and "a/b/" both select "a/b/c" and "a/b/c/d", never "a/b"
// itself nor "a/bc". The empty prefix selects every key and "/" every key
// that starts with "/"; any other prefix must be a valid key (see
// ValidateKey) once its trailing "/" is cut.
func ValidatePrefix(prefix string) (string, error) {
	if prefix == "" || prefix == "/" {
		return prefix, nil
	}
	dir := strings.TrimSuffix(prefix, "/")
	if err := ValidateKey(dir); err != nil {
		return "", fmt.Errorf("prefix %q: %w", prefix, err)
	}
	return dir + "/", nil
}

// InPrefix reports whether key is under dir, a prefix as ValidatePrefix
// returns it.
func InPrefix(key, dir string) bool { return strings.HasPrefix(key, dir) }
