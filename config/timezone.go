package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	_ "time/tzdata" // timezones resolve on hosts without a zoneinfo database (slim containers)
)

var timezoneModes = []string{"auto", "manual"}

// utcAliases are the names nanobot folds into "UTC".
var utcAliases = map[string]bool{
	"Etc/GMT": true, "Etc/UTC": true, "GMT": true, "GMT0": true, "Greenwich": true,
	"UCT": true, "Universal": true, "Zulu": true, "UTC": true, "Etc/Universal": true, "Etc/Zulu": true,
}

// resolveTimezone applies nanobot's rule: without timezoneMode, a config
// that names a timezone is "manual" and one that does not is "auto"; in
// auto mode the host's timezone replaces agents.defaults.timezone.
func (c *Config) resolveTimezone(src string, tree map[string]any, environ []string) error {
	d := &c.Agents.Defaults
	if !treeHas(tree, "agents", "defaults", "timezoneMode") {
		d.TimezoneMode = "auto"
		if treeHas(tree, "agents", "defaults", "timezone") {
			d.TimezoneMode = "manual"
		}
	}
	switch d.TimezoneMode {
	case "auto":
		d.Timezone = detectTimezone(environ)
	case "manual":
		if _, err := time.LoadLocation(d.Timezone); err != nil || d.Timezone == "" || d.Timezone == "Local" {
			return &Error{Source: src, Key: "agents.defaults.timezone", Msg: fmt.Sprintf("unknown timezone %q (an IANA name such as Europe/Paris)", d.Timezone)}
		}
	default:
		return &Error{Source: src, Key: "agents.defaults.timezoneMode", Msg: fmt.Sprintf("%q is not one of %s", d.TimezoneMode, strings.Join(timezoneModes, ", "))}
	}
	return nil
}

// detectTimezone is the host's IANA timezone (TZ, then /etc/localtime,
// then /etc/timezone), "UTC" when none can be told.
func detectTimezone(environ []string) string {
	candidates := []string{strings.TrimPrefix(lookupEnv(environ, "TZ"), ":")}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(filepath.ToSlash(target), "zoneinfo/"); ok {
			candidates = append(candidates, name)
		}
	}
	if data, err := os.ReadFile("/etc/timezone"); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(data)))
	}
	for _, name := range candidates {
		if name == "" || strings.HasPrefix(name, "/") {
			continue
		}
		if _, err := time.LoadLocation(name); err != nil {
			continue
		}
		if utcAliases[name] {
			return "UTC"
		}
		return name
	}
	return "UTC"
}

// treeHas tells whether the parsed config (file and environment) spells
// out the key at path, in any of the accepted spellings.
func treeHas(tree map[string]any, path ...string) bool {
	var cur any = tree
	for _, key := range path {
		if ev, ok := cur.(envValue); ok {
			cur = ev.val
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		found := false
		for k, v := range obj {
			if normKey(k) == normKey(key) {
				cur, found = v, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
