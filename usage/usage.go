// Package usage keeps the token usage of every model call in an
// append-only JSONL file and adds it up per turn, session, day and model.
package usage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// Record is one model call's usage. (Session, Turn, Call) identifies the
// call: a retried activity writes the same key again and is counted once.
type Record struct {
	Time       time.Time `json:"time"`
	Session    string    `json:"session"`
	Turn       string    `json:"turn"`
	Call       string    `json:"call"`
	Model      string    `json:"model"`
	Provider   string    `json:"provider,omitempty"`
	Prompt     int       `json:"prompt_tokens"`
	Completion int       `json:"completion_tokens"`
	// Cached is the part of Prompt the provider served from its cache (0 when it does not say).
	Cached int `json:"cached_tokens,omitempty"`
	// CacheWrite is the part of Prompt written to the provider's cache (Anthropic's cache_creation_input_tokens).
	CacheWrite int `json:"cache_write_tokens,omitempty"`
	// Estimated: the provider reported nothing, the tokens were counted locally.
	Estimated bool `json:"estimated,omitempty"`
	// Kind says what made the call.
	Kind Kind `json:"kind,omitempty"`
}

// Kind is what made a model call: a kind of turn (its own calls, "" for a
// chat turn, which the file leaves out) or a consolidation beside a turn.
type Kind string

// KindTurn is a chat turn's call; KindConsolidate a memory consolidation summary.
const (
	KindTurn        Kind = ""
	KindConsolidate Kind = "consolidate"
)

// TurnKind is the kind of the calls a turn of this kind makes (Dream's are "dream").
func TurnKind(k protocol.TurnKind) Kind { return Kind(k) }

// KindName is how reports name a kind.
func KindName(kind Kind) string {
	if kind == KindTurn {
		return "turn"
	}
	return string(kind)
}

// countsAsTurn: a consolidation round runs inside or beside a turn and is not one.
func (r Record) countsAsTurn() bool { return r.Kind != KindConsolidate }

func (r Record) key() string { return r.Session + "\x00" + r.Turn + "\x00" + r.Call }

// Store is where the usage of a deployment is kept: the JSONL file of one
// home (File) or a database shared by many hosts.
type Store interface {
	// Add records one call; a call recorded again replaces its figures.
	Add(Record) error
	// Since returns the records at or after t (zero: all), one per call, in
	// the order calls were first recorded, and how many entries were unreadable.
	Since(t time.Time) (recs []Record, bad int, err error)
	// Where names the store in messages (a file path, a database).
	Where() string
}

// File is the usage file of one nanobot home.
type File struct {
	Path string
	mu   sync.Mutex
}

var _ Store = (*File)(nil)

// Path is where a nanobot home keeps its usage file.
func Path(configDir string) string { return filepath.Join(configDir, "usage", "usage.jsonl") }

// Open returns the file store at path (the file is created on the first Add).
func Open(path string) *File { return &File{Path: path} }

// Where is the file's path.
func (s *File) Where() string { return s.Path }

// Add appends one record; the file lock keeps lines whole across processes.
func (s *File) Add(r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode usage: %w", err)
	}
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("usage dir: %w", err)
	}
	f, err := os.OpenFile(s.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open usage file: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock usage file: %w", err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("append usage: %w", err)
	}
	return nil
}

// Since reads the records at or after t (zero: all), one per call, in file order.
// A line that does not parse is skipped and counted in bad.
func (s *File) Since(t time.Time) (recs []Record, bad int, err error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read usage file: %w", err)
	}
	index := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r Record
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			bad++
			continue
		}
		if r.Time.Before(t) {
			continue
		}
		if i, ok := index[r.key()]; ok {
			recs[i] = r // the last attempt's figures stand for the call
			continue
		}
		index[r.key()] = len(recs)
		recs = append(recs, r)
	}
	return recs, bad, sc.Err()
}

// Totals are added-up tokens.
type Totals struct {
	Calls      int `json:"calls"`
	Turns      int `json:"turns"`
	Prompt     int `json:"prompt_tokens"`
	Completion int `json:"completion_tokens"`
	Cached     int `json:"cached_tokens"`
	CacheWrite int `json:"cache_write_tokens,omitempty"`
	// Estimated counts the calls whose tokens were counted locally.
	Estimated int `json:"estimated_calls,omitempty"`
}

func (t *Totals) add(r Record) {
	t.Calls++
	t.Prompt += r.Prompt
	t.Completion += r.Completion
	t.Cached += r.Cached
	t.CacheWrite += r.CacheWrite
	if r.Estimated {
		t.Estimated++
	}
}

// Row is the totals of one group (a day and model, a session, a turn).
type Row struct {
	Day     string `json:"day,omitempty"`
	Model   string `json:"model,omitempty"`
	Session string `json:"session,omitempty"`
	Turn    string `json:"turn,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Totals
}

// Report is usage grouped the ways users ask for it.
type Report struct {
	Since    time.Time `json:"since"`
	ByDay    []Row     `json:"by_day_and_model"`
	Sessions []Row     `json:"by_session"`
	// ByKind splits the calls by what they were for (turn, consolidate, dream) and model.
	ByKind []Row  `json:"by_kind_and_model"`
	Total  Totals `json:"total"`
}

// Summarize groups records by day (in loc) and model, and by session.
func Summarize(recs []Record, since time.Time, loc *time.Location) Report {
	rep := Report{Since: since}
	rep.ByDay = group(recs, func(r Record) Row { return Row{Day: r.Time.In(loc).Format(time.DateOnly), Model: r.Model} })
	rep.Sessions = group(recs, func(r Record) Row { return Row{Session: r.Session} })
	rep.ByKind = group(recs, func(r Record) Row { return Row{Kind: KindName(r.Kind), Model: r.Model} })
	turns := map[string]bool{}
	for _, r := range recs {
		rep.Total.add(r)
		if r.countsAsTurn() {
			turns[r.Session+"\x00"+r.Turn] = true
		}
	}
	rep.Total.Turns = len(turns)
	sort.SliceStable(rep.ByDay, func(i, j int) bool {
		if rep.ByDay[i].Day != rep.ByDay[j].Day {
			return rep.ByDay[i].Day < rep.ByDay[j].Day
		}
		return rep.ByDay[i].Model < rep.ByDay[j].Model
	})
	sort.SliceStable(rep.ByKind, func(i, j int) bool {
		if rep.ByKind[i].Kind != rep.ByKind[j].Kind {
			return rep.ByKind[i].Kind > rep.ByKind[j].Kind // turn first
		}
		return rep.ByKind[i].Model < rep.ByKind[j].Model
	})
	sort.SliceStable(rep.Sessions, func(i, j int) bool {
		return rep.Sessions[i].Prompt+rep.Sessions[i].Completion > rep.Sessions[j].Prompt+rep.Sessions[j].Completion
	})
	return rep
}

// ForTurn adds up one turn's calls.
func ForTurn(recs []Record, session, turn string) Totals {
	var t Totals
	for _, r := range recs {
		if r.Session == session && r.Turn == turn {
			t.add(r)
			if r.countsAsTurn() {
				t.Turns = 1
			}
		}
	}
	return t
}

func group(recs []Record, keyOf func(Record) Row) []Row {
	index := map[Row]int{}
	turns := map[Row]map[string]bool{}
	var rows []Row
	for _, r := range recs {
		k := keyOf(r)
		i, ok := index[k]
		if !ok {
			i = len(rows)
			index[k] = i
			rows = append(rows, k)
			turns[k] = map[string]bool{}
		}
		rows[i].add(r)
		if r.countsAsTurn() {
			turns[k][r.Session+"\x00"+r.Turn] = true
		}
		rows[i].Turns = len(turns[k])
	}
	return rows
}
