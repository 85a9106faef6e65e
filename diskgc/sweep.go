// Package diskgc keeps disk bounded: it removes what the retention
// settings let go (old unreferenced media, stale cache copies, idle
// archived sessions) from the files and from PostgreSQL, and measures
// what each kind of state takes.
package diskgc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/media"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/session"
)

// The kinds of state a sweep removes and Usage measures.
const (
	KindSessions = "sessions"
	KindMedia    = "media"
	KindTemp     = "temp"
	KindTemporal = "temporal db"
	KindMemory   = "memory"
)

// Sweep is one pass of the retention rules over a process's state.
type Sweep struct {
	Ages config.Ages
	// Now is the instant ages are measured from.
	Now time.Time
	// Sessions is the journal; it must list sessions (session.Lister).
	Sessions session.Store
	// MediaDir is <workspace>/media on the host holding the workspace ("" = none here).
	MediaDir string
	// TempDir is the cache media fetched from the database goes to on other hosts.
	TempDir string
	// Media is the shared media table (nil on the files).
	Media *pgstore.Media
	Log   *slog.Logger
}

// Removed is one thing a sweep deleted.
type Removed struct {
	Kind  string `json:"kind"`
	What  string `json:"what"`
	Bytes int64  `json:"bytes"`
}

// Report is what a sweep removed.
type Report struct {
	Removed []Removed `json:"removed,omitempty"`
	// Kept counts what was old enough to go but is still referenced or unarchived.
	Kept int `json:"kept"`
}

// Freed sums the bytes removed, by kind.
func (r Report) Freed() map[string]int64 {
	out := map[string]int64{}
	for _, x := range r.Removed {
		out[x.Kind] += x.Bytes
	}
	return out
}

// Total is every byte removed.
func (r Report) Total() int64 {
	var n int64
	for _, x := range r.Removed {
		n += x.Bytes
	}
	return n
}

// Run applies the rules: sessions first, since what they still name keeps media.
func (s Sweep) Run(ctx context.Context) (Report, error) {
	if s.Log == nil {
		s.Log = slog.Default()
	}
	if s.Now.IsZero() {
		s.Now = time.Now()
	}
	var rep Report
	live, err := s.sweepSessions(ctx, &rep)
	if err != nil {
		return rep, err
	}
	var errs []error
	if s.MediaDir != "" && s.Ages.Media > 0 {
		errs = append(errs, s.sweepDir(KindMedia, s.MediaDir, s.Ages.Media, live, &rep))
	}
	if s.TempDir != "" && s.Ages.Temp > 0 {
		errs = append(errs, s.sweepDir(KindTemp, s.TempDir, s.Ages.Temp, nil, &rep))
	}
	if s.Media != nil && s.Ages.Media > 0 {
		errs = append(errs, s.sweepSharedMedia(ctx, live, &rep))
	}
	return rep, errors.Join(errs...)
}

// liveText is every unarchived message of every kept session: a
// media path it contains is still in a prompt and is kept.
type liveText struct{ strings.Builder }

func (l *liveText) names(path string) bool { return l != nil && strings.Contains(l.String(), path) }

// add keeps the text of msgs as written (JSON would escape & and <): what
// was said, the multimodal parts, and the arguments of tool calls.
func (l *liveText) add(msgs []chat.Message) {
	for _, m := range msgs {
		l.WriteString(m.Content)
		l.Write(m.ContentParts)
		for _, tc := range m.ToolCalls {
			l.WriteString(tc.Function.Arguments)
		}
		l.WriteByte('\n')
	}
}

// TemporaryChatAge is when a temporary chat its page never discarded is removed.
const TemporaryChatAge = 24 * time.Hour

// sweepSessions removes sessions untouched for Ages.Sessions whose messages
// are all archived into memory, and Dream's and subagents' own sessions of
// that age; it returns the text of what stays unarchived.
func (s Sweep) sweepSessions(ctx context.Context, rep *Report) (*liveText, error) {
	lister, ok := s.Sessions.(session.Lister)
	if !ok {
		return nil, errors.New("gc: the session store cannot list sessions")
	}
	all, err := lister.Sessions()
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Key < all[j].Key })
	live := &liveText{}
	for _, info := range all {
		sess, err := s.Sessions.Load(ctx, info.Key)
		if err != nil {
			return nil, fmt.Errorf("gc: load session %s: %w", info.Key, err)
		}
		unarchived := sess.Messages[min(max(sess.LastConsolidated, 0), len(sess.Messages)):]
		own := sess.Kind == string(protocol.DreamTurn) || sess.Kind == string(protocol.SubagentTurn)
		old := s.Ages.Sessions > 0 && s.Now.Sub(info.Modified) >= s.Ages.Sessions
		if sess.Kind == string(protocol.TemporaryTurn) {
			own, old = true, s.Now.Sub(info.Modified) >= TemporaryChatAge // a page closed without discarding it
		}
		if old && (own || len(unarchived) == 0) {
			size := s.sessionBytes(info.Key, sess)
			if err := lister.Delete(info.Key); err != nil {
				return nil, fmt.Errorf("gc: %w", err)
			}
			rep.Removed = append(rep.Removed, Removed{Kind: KindSessions, What: info.Key, Bytes: size})
			continue
		}
		if old {
			rep.Kept++
		}
		live.add(unarchived)
	}
	return live, nil
}

// sessionBytes is the file and turn data of a session on the files, the
// size of its messages as JSON on the database.
func (s Sweep) sessionBytes(key string, sess *session.Session) int64 {
	if p := s.Sessions.Path(key); filepath.IsAbs(p) {
		if st, err := os.Stat(p); err == nil {
			return st.Size() + DirBytes(strings.TrimSuffix(p, ".jsonl")+".turns")
		}
	}
	data, _ := json.Marshal(sess.Messages)
	return int64(len(data))
}

// sweepDir removes the regular files under dir last written before maxAge
// that live does not name, then the folders that left empty.
func (s Sweep) sweepDir(kind, dir string, maxAge time.Duration, live *liveText, rep *Report) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case d.IsDir():
			if p != dir {
				dirs = append(dirs, p)
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil || s.Now.Sub(info.ModTime()) < maxAge {
			return nil
		}
		if live.names(p) {
			rep.Kept++
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		rep.Removed = append(rep.Removed, Removed{Kind: kind, What: p, Bytes: info.Size()})
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first
		_ = os.Remove(dirs[i]) // fails, as it should, on a folder still holding files
	}
	if err != nil {
		return fmt.Errorf("gc %s in %s: %w", kind, dir, err)
	}
	return nil
}

// sweepSharedMedia removes shared media rows older than Ages.Media that no
// unarchived message names.
func (s Sweep) sweepSharedMedia(ctx context.Context, live *liveText, rep *Report) error {
	old, err := s.Media.Older(ctx, s.Now.Add(-s.Ages.Media))
	if err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	var drop []string
	for _, row := range old {
		// The workspace host names a fetched copy by its kept name under its own media/.
		if live.names(row.Ref) || live.names(string(filepath.Separator)+filepath.Join("media", media.KeptName(row.Ref))) {
			rep.Kept++
			continue
		}
		drop = append(drop, row.Ref)
	}
	gone, err := s.Media.Drop(ctx, drop, s.Now.Add(-s.Ages.Media))
	if err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	for _, row := range gone {
		rep.Removed = append(rep.Removed, Removed{Kind: KindMedia, What: row.Ref + " (database)", Bytes: row.Size})
	}
	return nil
}
