// Package plural writes counts as English does: "1 operation",
// "2 operations", "0 items". Every message that counts something uses it,
// so that no output reads "1 problems" or "1 object(s)".
package plural

import "strconv"

// N is n and the noun: singular when n is 1 (or -1), else the noun with
// "s" (N(3, "host") is "3 hosts").
func N(n int, singular string) string {
	return Of(n, singular, singular+"s")
}

// Of is n and the noun, for nouns whose plural is not the singular with
// "s" (Of(2, "policy", "policies")).
func Of(n int, singular, plural string) string {
	if n == 1 || n == -1 {
		return strconv.Itoa(n) + " " + singular
	}
	return strconv.Itoa(n) + " " + plural
}
