// Package pairing lets a stranger in by a code the owner approves: an
// unknown sender in a direct message gets an 8-character code, valid ten
// minutes, and nothing reaches the model until the code is approved.
package pairing

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/nanobot-durable/nanobot/atomicfile"
)

// CodeTTL is how long a pairing code stays valid.
const CodeTTL = 600 * time.Second

// codeAlphabet is upper-case letters and digits without look-alikes (0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// CodeLength is the length of a pairing code.
const CodeLength = 8

// Request is a pending code.
type Request struct {
	Code     string    `json:"code"`
	Channel  string    `json:"channel"`
	SenderID string    `json:"sender_id"`
	ChatID   string    `json:"chat_id"`
	Created  time.Time `json:"created"`
	Expires  time.Time `json:"expires"`
}

// Approved is a sender let in by pairing.
type Approved struct {
	Channel  string    `json:"channel"`
	SenderID string    `json:"sender_id"`
	Approved time.Time `json:"approved"`
}

// State is what pairing keeps: the pending codes and the approved senders.
type State struct {
	Pending  []Request  `json:"pending"`
	Approved []Approved `json:"approved"`
}

// Backend is where the state lives: one JSON file (the default) or a
// database shared by many hosts. Update runs fn on the state and saves
// what it leaves, atomically, serialized against every other writer.
type Backend interface {
	Read(ctx context.Context) (*State, error)
	Update(ctx context.Context, fn func(*State) error) error
}

// Store is pairing's rules (codes, expiry, matching) over a Backend.
type Store struct {
	// Path is the JSON file of the default backend (used when backend is nil).
	Path string
	// Now is the clock (tests move it).
	Now     func() time.Time
	backend Backend
}

// NewStore keeps pairing state in <configDir>/pairing.json.
func NewStore(configDir string) *Store {
	return &Store{Path: filepath.Join(configDir, "pairing.json")}
}

// New keeps pairing state in b.
func New(b Backend) *Store { return &Store{backend: b} }

func (s *Store) state() Backend {
	if s.backend != nil {
		return s.backend
	}
	return File{Path: s.Path}
}

// ErrUnknownCode is returned for a code that is not pending (or expired).
var ErrUnknownCode = errors.New("no pending pairing request has that code (it may have expired)")

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// IsApproved tells whether pairing let this sender of this channel in.
func (s *Store) IsApproved(channel, senderID string) (bool, error) {
	st, err := s.read()
	if err != nil {
		return false, err
	}
	for _, a := range st.Approved {
		if a.Channel == channel && SameSender(a.SenderID, senderID) {
			return true, nil
		}
	}
	return false, nil
}

// Request returns the sender's pending code, making one when it has none;
// fresh is false when an unexpired code was already given (so the chat is
// not flooded with codes).
func (s *Store) Request(channel, senderID, chatID string) (code string, fresh bool, err error) {
	err = s.update(func(st *State) error {
		for _, r := range st.Pending {
			if r.Channel == channel && r.SenderID == senderID {
				code = r.Code
				return nil
			}
		}
		c, err := newCode()
		if err != nil {
			return err
		}
		now := s.now()
		st.Pending = append(st.Pending, Request{Code: c, Channel: channel, SenderID: senderID, ChatID: chatID, Created: now, Expires: now.Add(CodeTTL)})
		code, fresh = c, true
		return nil
	})
	return code, fresh, err
}

// Approve lets the code's sender in.
func (s *Store) Approve(code string) (Request, error) {
	return s.take(code, true)
}

// Deny drops a pending code.
func (s *Store) Deny(code string) (Request, error) {
	return s.take(code, false)
}

func (s *Store) take(code string, approve bool) (Request, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	var got Request
	err := s.update(func(st *State) error {
		for i, r := range st.Pending {
			if r.Code != code {
				continue
			}
			got = r
			st.Pending = append(st.Pending[:i], st.Pending[i+1:]...)
			if approve {
				st.Approved = append(st.Approved, Approved{Channel: r.Channel, SenderID: r.SenderID, Approved: s.now()})
			}
			return nil
		}
		return ErrUnknownCode
	})
	return got, err
}

// Revoke removes an approved sender; id is "channel:sender" or a sender ID
// (every channel). It returns how many it removed.
func (s *Store) Revoke(id string) (int, error) {
	n := 0
	err := s.update(func(st *State) error {
		keep := st.Approved[:0]
		for _, a := range st.Approved {
			if id == a.Channel+":"+a.SenderID || SameSender(a.SenderID, id) {
				n++
				continue
			}
			keep = append(keep, a)
		}
		st.Approved = keep
		return nil
	})
	return n, err
}

// List returns the pending (unexpired) requests and the approved senders.
func (s *Store) List() ([]Request, []Approved, error) {
	st, err := s.read()
	if err != nil {
		return nil, nil, err
	}
	return st.Pending, st.Approved, nil
}

// SameSender matches nanobot's "id|username" sender IDs: two IDs are the
// same sender when they are equal or share a non-empty part.
func SameSender(a, b string) bool {
	if strings.Trim(a, "|") == "" || strings.Trim(b, "|") == "" {
		return false
	}
	if a == b {
		return true
	}
	for _, pa := range strings.Split(a, "|") {
		for _, pb := range strings.Split(b, "|") {
			if pa != "" && pa == pb {
				return true
			}
		}
	}
	return false
}

func newCode() (string, error) {
	var b strings.Builder
	for range CodeLength {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(codeAlphabet))))
		if err != nil {
			return "", fmt.Errorf("pairing code: %w", err)
		}
		b.WriteByte(codeAlphabet[n.Int64()])
	}
	return b.String(), nil
}

// read loads the state without expired requests.
func (s *Store) read() (*State, error) {
	st, err := s.state().Read(context.Background())
	if err != nil {
		return nil, err
	}
	s.dropExpired(st)
	return st, nil
}

func (s *Store) dropExpired(st *State) {
	now := s.now()
	live := st.Pending[:0]
	for _, r := range st.Pending {
		if now.Before(r.Expires) {
			live = append(live, r)
		}
	}
	st.Pending = live
}

func (s *Store) update(fn func(*State) error) error {
	return s.state().Update(context.Background(), func(st *State) error {
		s.dropExpired(st)
		if err := fn(st); err != nil {
			return err
		}
		sort.SliceStable(st.Approved, func(i, j int) bool { return st.Approved[i].Approved.Before(st.Approved[j].Approved) })
		return nil
	})
}

// File is the default backend: one JSON file, shared by every process of a
// host (a file lock serializes them).
type File struct{ Path string }

// Read loads the file; a missing file is an empty state.
func (f File) Read(context.Context) (*State, error) {
	var st State
	data, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &st, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &st); err != nil {
			return nil, fmt.Errorf("pairing file %s is not valid JSON: %w", f.Path, err)
		}
	}
	return &st, nil
}

// Update rewrites the file atomically under its lock.
func (f File) Update(ctx context.Context, fn func(*State) error) error {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return fmt.Errorf("pairing: %w", err)
	}
	lf, err := os.OpenFile(f.Path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("pairing lock: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("pairing lock: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN) //nolint:errcheck
	st, err := f.Read(ctx)
	if err != nil {
		return err
	}
	if err := fn(st); err != nil {
		return err
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(f.Path, data, 0o600)
}
