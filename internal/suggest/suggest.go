// Package suggest finds the word a typo meant among known ones (the
// command names of netagent): "did you mean".
package suggest

import "strings"

// Closest returns the one of names nearest to name: the one that starts
// with it, when only one does, or the one at the smallest edit
// distance (a letter missing, added, changed or two swapped count one)
// if that is at most a third of its length (at least 1); "" when none is.
func Closest(name string, names []string) string {
	var prefixed []string
	best, bestD := "", 0
	for _, n := range names {
		if name != "" && strings.HasPrefix(n, name) {
			prefixed = append(prefixed, n)
		}
		if d := Distance(name, n); best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	if bestD <= max(1, len(best)/3) {
		return best
	}
	return ""
}

// Distance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of adjacent letters.
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
