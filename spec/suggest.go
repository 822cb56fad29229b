package spec

import "github.com/agext/levenshtein"

// Suggest returns the candidate closest to given when it is close enough to
// be a likely typo (edit distance under 3), else "": the "did you mean" of
// every cadence message. The closest wins, the earliest on a tie.
func Suggest(given string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		d := levenshtein.Distance(given, c, nil)
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
