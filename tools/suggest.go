package tools

import (
	"strings"
	"unicode"
)

// Thresholds follow nanobot's registry: suggest only a clear, close winner.
const (
	suggestMinScore   = 0.84
	suggestTieMargin  = 0.08
	suggestMinBigrams = 0.45
)

// noiseTokens are trailing words models tack onto tool names ("read_file_tool").
var noiseTokens = map[string]bool{"call": true, "function": true, "tool": true}

// suggestName returns the registered name closest to name, or "" when
// nothing is close enough or two candidates are about equally close.
func suggestName(name string, registered []string) string {
	key, tokens := suggestionKey(name)
	if key == "" {
		return ""
	}
	type scored struct {
		name  string
		score float64
	}
	var best, second scored
	for _, cand := range registered {
		ckey, ctokens := suggestionKey(cand)
		if !candidateAllowed(key, ckey) {
			continue
		}
		s := max(similarity(key, ckey), tokenSimilarity(tokens, ctokens))
		switch {
		case s > best.score:
			second, best = best, scored{cand, s}
		case s > second.score:
			second = scored{cand, s}
		}
	}
	if best.score < suggestMinScore || best.score-second.score < suggestTieMargin {
		return ""
	}
	return best.name
}

// suggestionKey lower-cases name, splits it into words at _, -, spaces and
// camelCase boundaries, drops trailing noise words, and joins the rest.
func suggestionKey(name string) (string, []string) {
	var tokens []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			tokens = append(tokens, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	trimmed := tokens
	for len(trimmed) > 0 && noiseTokens[trimmed[len(trimmed)-1]] {
		trimmed = trimmed[:len(trimmed)-1]
	}
	if len(trimmed) == 0 {
		trimmed = tokens
	}
	return strings.Join(trimmed, ""), trimmed
}

// candidateAllowed filters out candidates of very different length or with
// few shared character pairs before scoring.
func candidateAllowed(key, cand string) bool {
	if key == cand {
		return true
	}
	kr, cr := []rune(key), []rune(cand)
	if abs(len(kr)-len(cr)) > max(2, len(kr)/3) {
		return false
	}
	kb, cb := bigrams(kr), bigrams(cr)
	if len(kb) == 0 || len(cb) == 0 {
		return false
	}
	shared := 0
	for b := range kb {
		if cb[b] {
			shared++
		}
	}
	return float64(shared)/float64(max(len(kb), len(cb))) >= suggestMinBigrams
}

func bigrams(r []rune) map[string]bool {
	out := map[string]bool{}
	if len(r) == 1 {
		out[string(r)] = true
	}
	for i := 0; i+1 < len(r); i++ {
		out[string(r[i:i+2])] = true
	}
	return out
}

// similarity is 1 minus the normalized edit distance of two strings.
func similarity(a, b string) float64 {
	return seqSimilarity([]rune(a), []rune(b))
}

// tokenSimilarity compares word sequences, so "file_read" is close to "read_file".
func tokenSimilarity(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	// Same words in another order count as a strong match.
	if len(a) == len(b) {
		seen := map[string]int{}
		for _, t := range a {
			seen[t]++
		}
		same := true
		for _, t := range b {
			if seen[t]--; seen[t] < 0 {
				same = false
				break
			}
		}
		if same {
			return 0.9
		}
	}
	return seqSimilarity(a, b)
}

func seqSimilarity[T comparable](a, b []T) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 1
	}
	return 1 - float64(EditDistance(a, b))/float64(n)
}

// EditDistance is the Levenshtein distance, in O(len(b)) memory (tool
// names here, slash commands in activities).
func EditDistance[T comparable](a, b []T) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
