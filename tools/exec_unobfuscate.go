package tools

import (
	"regexp"
	"strconv"
	"strings"
)

// Shell spellings that hide a word from the deny rules: variables set in
// the same command, $IFS, $(echo x), ANSI-C $'..', brace lists and quotes.
var (
	shellAssign  = regexp.MustCompile(`(?:^|[\s;&|(])([a-z_][a-z0-9_]*)=('[^']*'|"[^"]*"|[^\s;&|]*)`)
	shellIFS     = regexp.MustCompile(`\$\{ifs[^}]*\}|\$ifs\b`)
	shellVarRef  = regexp.MustCompile(`\$\{[a-z_][a-z0-9_]*\}|\$[a-z_][a-z0-9_]*`)
	shellEcho    = regexp.MustCompile("\\$\\(\\s*(?:echo|printf)\\s+([^()]*?)\\s*\\)|`\\s*(?:echo|printf)\\s+([^`]*?)\\s*`")
	shellANSIC   = regexp.MustCompile(`\$'((?:[^'\\]|\\.)*)'`)
	shellBraces  = regexp.MustCompile(`\{([^{}\s]*,[^{}\s]*)\}`)
	shellEscapes = regexp.MustCompile(`\\(x[0-9a-f]{1,2}|[0-7]{1,3}|.)`)
)

// unobfuscate rewrites a lower-cased command the way the shell would read
// those spellings, so the deny rules see the words that will run. It is a
// second look, not a shell: a command computed at run time (base64 | sh)
// stays out of its sight.
func unobfuscate(cmd string) string {
	for i := 0; i < 3; i++ {
		vars := map[string]string{}
		for _, m := range shellAssign.FindAllStringSubmatch(cmd, -1) {
			vars[m[1]] = strings.Trim(m[2], `'"`)
		}
		prev := cmd
		cmd = shellIFS.ReplaceAllString(cmd, " ")
		// One pass, left to right: $a$b must become the two values joined.
		cmd = shellVarRef.ReplaceAllStringFunc(cmd, func(m string) string {
			if v, ok := vars[strings.Trim(m, "${}")]; ok {
				return v
			}
			return m
		})
		cmd = shellEcho.ReplaceAllString(cmd, "$1$2")
		cmd = shellANSIC.ReplaceAllStringFunc(cmd, func(m string) string {
			return shellEscapes.ReplaceAllStringFunc(m[2:len(m)-1], decodeEscape)
		})
		cmd = shellBraces.ReplaceAllStringFunc(cmd, func(m string) string {
			return strings.ReplaceAll(m[1:len(m)-1], ",", " ")
		})
		if cmd == prev {
			break
		}
	}
	return strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(cmd)
}

func decodeEscape(e string) string {
	body := e[1:]
	switch {
	case body[0] == 'x' && len(body) > 1:
		if n, err := strconv.ParseUint(body[1:], 16, 8); err == nil {
			return string(rune(n))
		}
	case body[0] >= '0' && body[0] <= '7':
		if n, err := strconv.ParseUint(body, 8, 8); err == nil {
			return string(rune(n))
		}
	case body == "n", body == "t":
		return " "
	}
	return body
}
