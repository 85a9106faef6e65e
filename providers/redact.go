package providers

import "regexp"

// secretShapes are the shapes of API keys and bot tokens a provider or
// platform may echo back in an error ("Incorrect API key provided: sk-…").
var secretShapes = regexp.MustCompile(`\b(?:sk|rk|pk|gsk|ghp|github_pat|xox[abposr]|xapp|AIza)[-_A-Za-z0-9]{12,}|\b\d{6,12}:[A-Za-z0-9_-]{30,}|(?i:bearer)\s+[-._~+/A-Za-z0-9]{12,}=*`)

// Redact masks anything shaped like a key or token, keeping its first
// four characters so the user can tell which key was meant.
func Redact(s string) string {
	return secretShapes.ReplaceAllStringFunc(s, func(m string) string {
		return m[:4] + "…[redacted]"
	})
}
