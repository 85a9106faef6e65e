package protocol

import "fmt"

// CompactTokens writes a token count the way summaries and `turn show` do: 950, 1.2k, 34k.
func CompactTokens(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	default:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
}
