package session

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"
)

// HandleKey is where nanobot keeps a session's @handle in its metadata; a
// session imported from nanobot keeps the handle it had there.
const HandleKey = "session_handle"

// Syllables of a handle, as nanobot draws them: pronounceable names such
// as "bodira", never the session key, which may hold a phone number.
var (
	handleSyllables = strings.Fields(`ba be bi bo da de di do fa fe fi fo ga ge gi go ha he hi ho
		ja je ji jo ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po
		ra re ri ro ru sa se si so su ta te ti to tu va`)
	handleEndings = strings.Fields(`la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru
		sa se si so su ta te ti to tu va ve vi vo vu ya ye yi yo yu`)
	blockedHandles = map[string]bool{"dago": true, "homo": true, "kike": true, "pedo": true, "rape": true}
	handlePattern  = regexp.MustCompile(`^[a-z]{4,16}$`)
)

// ErrBadHandle is a handle that cannot name a session.
var ErrBadHandle = errors.New("session handle is invalid")

// NormalizeHandle is the bare, lower-case handle of "@Name" or "name".
func NormalizeHandle(v string) (string, error) {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(v), "@"))
	if !handlePattern.MatchString(name) {
		return "", ErrBadHandle
	}
	return name, nil
}

// Handled is a session with its @handle.
type Handled struct {
	Key    string
	Handle string
}

// HandleSource is a session as handles are drawn for it.
type HandleSource struct {
	Key       string
	CreatedAt time.Time
	// Stored is the handle its metadata holds ("" for none).
	Stored string
}

// Handles gives each session a handle, stable without writing anything:
// the stored one when it is valid and unused, else one drawn from a hash
// of the key, the next free candidate on a collision. Sessions are taken
// oldest first, so a new session never moves an older one's handle.
func Handles(sources []HandleSource) []Handled {
	sorted := append([]HandleSource(nil), sources...)
	sort.Slice(sorted, func(i, j int) bool {
		if !sorted[i].CreatedAt.Equal(sorted[j].CreatedAt) {
			return sorted[i].CreatedAt.Before(sorted[j].CreatedAt)
		}
		return sorted[i].Key < sorted[j].Key
	})
	used := map[string]bool{}
	var pending []HandleSource
	var out []Handled
	for _, s := range sorted {
		name, err := NormalizeHandle(s.Stored)
		if err != nil || used[name] {
			pending = append(pending, s)
			continue
		}
		used[name] = true
		out = append(out, Handled{Key: s.Key, Handle: name})
	}
	for _, s := range pending {
		name := drawHandle(s.Key, used)
		used[name] = true
		out = append(out, Handled{Key: s.Key, Handle: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}

// drawHandle is the first free three-syllable name from the key's hash on.
func drawHandle(key string, used map[string]bool) string {
	sum := sha256.Sum256([]byte(key))
	size := uint64(len(handleSyllables) * len(handleSyllables) * len(handleEndings))
	start := binary.BigEndian.Uint64(sum[:8]) % size
	for off := range size {
		if name, ok := handleAt((start + off) % size); ok && !used[name] {
			return name
		}
	}
	return "session" // unreachable below 163 840 sessions
}

// handleAt decodes one candidate; names repeating a syllable are skipped.
func handleAt(i uint64) (string, bool) {
	end := handleEndings[i%uint64(len(handleEndings))]
	i /= uint64(len(handleEndings))
	second := handleSyllables[i%uint64(len(handleSyllables))]
	first := handleSyllables[i/uint64(len(handleSyllables))]
	if first == second || second == end || first == end {
		return "", false
	}
	name := first + second + end
	return name, !blockedHandles[name]
}
