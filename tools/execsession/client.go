package execsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// ErrNotFound: no such session (or not the caller's).
var ErrNotFound = errors.New("exec session not found")

// ErrExists: a session with this ID already runs (a retried start).
var ErrExists = errors.New("exec session exists")

// startTimeout bounds how long a new supervisor may take to say it is ready.
const startTimeout = 10 * time.Second

// Start writes spec into a new 0700 folder root/<spec.ID> and starts exe as
// its supervisor in a session of its own. A folder that exists is ErrExists.
func Start(root, exe string, spec Spec) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	_ = os.Chmod(root, 0o700)
	dir := filepath.Join(root, spec.ID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return ErrExists
		}
		return err
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, specFile), data, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	if len(filepath.Join(dir, sockFile)) >= 108 {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("the state folder %s is too deep for a Unix socket", root)
	}
	r, w, err := os.Pipe()
	if err != nil {
		_ = os.RemoveAll(dir)
		return err
	}
	defer func() { _ = r.Close() }()
	null, err := os.Open(os.DevNull)
	if err != nil {
		_ = w.Close()
		_ = os.RemoveAll(dir)
		return err
	}
	defer func() { _ = null.Close() }()
	proc, err := os.StartProcess(exe, []string{Marker, dir}, &os.ProcAttr{
		Dir:   dir,
		Env:   []string{"PATH=" + os.Getenv("PATH")},
		Files: []*os.File{null, null, null, w},
		// setsid: not in the worker's session or process group, so nothing aimed at those reaches it.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	_ = w.Close()
	if err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("start the session's supervisor: %w", err)
	}
	go func() { _, _ = proc.Wait() }() // reaped here while this process lives, by init after
	_ = r.SetReadDeadline(time.Now().Add(startTimeout))
	msg, _ := io.ReadAll(io.LimitReader(r, 4096))
	if string(msg) != "ready" {
		_ = proc.Kill()
		_ = os.RemoveAll(dir)
		if len(msg) == 0 {
			return errors.New("the session's supervisor did not start")
		}
		return errors.New(string(msg))
	}
	return nil
}

// Call sends req to the session's supervisor and waits for its reply (or ctx).
func Call(ctx context.Context, root, id string, req Request) (Reply, error) {
	if !validID(id) {
		return Reply{}, ErrNotFound
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", filepath.Join(root, id, sockFile))
	if err != nil {
		return Reply{}, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	defer func() { _ = c.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return Reply{}, fmt.Errorf("exec session %s: %w", id, err)
	}
	var rep Reply
	if err := json.NewDecoder(c).Decode(&rep); err != nil {
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		return Reply{}, fmt.Errorf("exec session %s: its supervisor did not answer: %w", id, err)
	}
	if rep.NotFound {
		return rep, ErrNotFound
	}
	return rep, nil
}

// Session is one folder of root: a live session's Info, or the Ended a supervisor left.
type Session struct {
	ID    string
	Info  Info
	Ended *Ended
	// Lost: the folder has no supervisor answering (it was killed); Forget removes it.
	Lost bool
}

// List reads every session under root, oldest first.
func List(ctx context.Context, root string) ([]Session, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, e := range entries {
		if !e.IsDir() || !validID(e.Name()) {
			continue
		}
		s := Session{ID: e.Name()}
		if data, err := os.ReadFile(filepath.Join(root, e.Name(), endedFile)); err == nil {
			var ended Ended
			if json.Unmarshal(data, &ended) == nil {
				s.Ended, s.Info = &ended, ended.Info
				out = append(out, s)
				continue
			}
		}
		rep, err := Call(ctx, root, e.Name(), Request{Op: OpInfo})
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, os.ErrNotExist):
			s.Lost = true // nobody listens: the supervisor was killed
			if data, rerr := os.ReadFile(filepath.Join(root, e.Name(), specFile)); rerr == nil {
				var spec Spec
				if json.Unmarshal(data, &spec) == nil {
					s.Info = Info{ID: spec.ID, Owner: spec.Owner, Command: spec.Command, Cwd: spec.Cwd}
				}
			}
		case err != nil:
			continue // busy or slow: listed next time, never forgotten for it
		default:
			s.Info = rep.Info
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Info.Started.Equal(out[j].Info.Started) {
			return out[i].Info.Started.Before(out[j].Info.Started)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ReadEnded returns what an ended session left, if it left anything.
func ReadEnded(root, id string) (*Ended, bool) {
	if !validID(id) {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(root, id, endedFile))
	if err != nil {
		return nil, false
	}
	var ended Ended
	if json.Unmarshal(data, &ended) != nil {
		return nil, false
	}
	return &ended, true
}

// Forget removes a session's folder: an ended one once told, a lost one.
func Forget(root, id string) {
	if validID(id) {
		_ = os.RemoveAll(filepath.Join(root, id))
	}
}

// End stops a session's process and removes its folder.
func End(ctx context.Context, root, id, owner string) error {
	_, err := Call(ctx, root, id, Request{Op: OpEnd, Owner: owner})
	return err
}

// validID keeps IDs to the hex names Start makes, so no ID walks out of root.
func validID(id string) bool {
	return id != "" && len(id) <= 32 && strings.Trim(id, "0123456789abcdef") == ""
}
