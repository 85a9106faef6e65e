package channeltest

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/nanobot-durable/nanobot/channels"
	"github.com/nanobot-durable/nanobot/config"
)

// EveryKeyIsReadOrUnused checks a channel's typed block (run from the
// channel's package directory): each key is either in read (and its Go
// field is read by the package's code, or by the kit's for a field of a
// kit type such as channels.DM) or tagged unused, never both, never
// neither, so a user who sets a key this build ignores is told.
func EveryKeyIsReadOrUnused(t *testing.T, name string, block any, read ...string) {
	t.Helper()
	sources := packageSources(t, ".")
	kit := packageSources(t, kitDir)
	isRead := map[string]bool{}
	for _, k := range read {
		isRead[k] = true
	}
	seen := map[string]bool{}
	for _, k := range config.BlockKeys(name, block) {
		seen[k.Path] = true
		switch {
		case isRead[k.Path] && k.Unused != "":
			t.Errorf("%s is tagged unused (%q) and listed as read: pick one", k.Path, k.Unused)
		case !isRead[k.Path] && k.Unused == "":
			t.Errorf("%s is neither read nor tagged `unused:\"why\"`: a user who sets it would not be told it does nothing", k.Path)
		case isRead[k.Path] && !fieldRead(k, sources, kit):
			t.Errorf("%s is listed as read but no code reads its field %s", k.Path, k.Field.Name)
		}
	}
	var stale []string
	for _, k := range read {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("keys listed as read that the block does not have: %v", stale)
	}
}

// kitDir is package channels seen from a channel's package directory.
const kitDir = ".."

// fieldRead tells whether code reads the key's field: the channel's own,
// or the kit's when the field belongs to a kit type.
func fieldRead(k config.Key, channel, kit string) bool {
	reads := regexp.MustCompile(`\.` + k.Field.Name + `\b`)
	if reads.MatchString(channel) {
		return true
	}
	return k.Owner != nil && k.Owner.PkgPath() == reflect.TypeFor[channels.DM]().PkgPath() && reads.MatchString(kit)
}

// packageSources is the non-test Go code of a directory.
func packageSources(t *testing.T, dir string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}
