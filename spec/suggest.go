package spec

import "github.com/agext/levenshtein"

// suggest returns the candidate closest to given when it is close enough to be
// a likely typo (edit distance under 3, or a case-only difference), else "".
// Candidates are tried in order; the closest wins, the earliest on a tie.
func suggest(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		d := levenshtein.Distance(given, c, nil)
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
