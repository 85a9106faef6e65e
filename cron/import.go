package cron

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/protocol"
)

// storeJob is one job of nanobot's cron/jobs.json (camelCase, with the
// snake_case spellings older versions wrote).
type storeJob struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Enabled  *bool  `json:"enabled"`
	Schedule struct {
		Kind     string `json:"kind"`
		AtMs     int64  `json:"atMs"`
		AtMs2    int64  `json:"at_ms"`
		EveryMs  int64  `json:"everyMs"`
		EveryMs2 int64  `json:"every_ms"`
		Expr     string `json:"expr"`
		TZ       string `json:"tz"`
	} `json:"schedule"`
	Payload struct {
		Kind          string `json:"kind"`
		Message       string `json:"message"`
		Channel       string `json:"channel"`
		To            string `json:"to"`
		SessionKey    string `json:"sessionKey"`
		SessionKey2   string `json:"session_key"`
		OriginChannel string `json:"originChannel"`
		OriginChan2   string `json:"origin_channel"`
		OriginChatID  string `json:"originChatId"`
		OriginChat2   string `json:"origin_chat_id"`
	} `json:"payload"`
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// job maps a stored job onto ours; system jobs (dream, heartbeat) and
// disabled ones are left out (nil).
func (s storeJob) job() (*Job, error) {
	if s.Enabled != nil && !*s.Enabled {
		return nil, nil
	}
	if s.Payload.Kind == "system_event" || s.Name == "dream" || s.Name == "heartbeat" {
		return nil, nil
	}
	channel := or(or(s.Payload.OriginChannel, s.Payload.OriginChan2), s.Payload.Channel)
	chatID := or(or(s.Payload.OriginChatID, s.Payload.OriginChat2), s.Payload.To)
	session := or(s.Payload.SessionKey, s.Payload.SessionKey2)
	if channel == "" || chatID == "" {
		if c, id, err := protocol.SplitSessionKey(session); err == nil {
			channel, chatID = c, id
		} else {
			return nil, fmt.Errorf("job %s (%s): no chat to answer", s.ID, s.Name)
		}
	}
	j := &Job{ID: sanitizeID(s.ID), Name: s.Name, Message: s.Payload.Message, SessionKey: session,
		Route: protocol.Route{Channel: channel, ChatID: chatID}}
	switch s.Schedule.Kind {
	case "every":
		j.Every = time.Duration(max(s.Schedule.EveryMs, s.Schedule.EveryMs2)) * time.Millisecond
	case "cron":
		j.Expr, j.TZ = s.Schedule.Expr, s.Schedule.TZ
	case "at":
		j.At = time.UnixMilli(max(s.Schedule.AtMs, s.Schedule.AtMs2)).UTC()
	default:
		return nil, fmt.Errorf("job %s (%s): unknown schedule kind %q", s.ID, s.Name, s.Schedule.Kind)
	}
	return j, nil
}

// sanitizeID keeps a job ID readable in a schedule ID.
func sanitizeID(id string) string {
	id = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' {
			return '-'
		}
		return r
	}, strings.TrimSpace(id))
	if id == "" {
		return NewID()
	}
	return id
}

// Import creates a schedule for each job of nanobot's jobs.json at path,
// then renames the file to jobs.json.imported (never deleted), so it is
// imported once. Jobs it cannot take (past "at" times, bad expressions)
// are reported in skipped and stay in the renamed file. A missing file is
// no work.
func Import(ctx context.Context, svc *Service, path string) (imported int, skipped []string, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read %s: %w", path, err)
	}
	var store struct {
		Jobs []storeJob `json:"jobs"`
	}
	if err := json.Unmarshal(data, &store); err != nil {
		return 0, nil, fmt.Errorf("%s is not nanobot's cron store: %w (left in place)", path, err)
	}
	for _, sj := range store.Jobs {
		j, err := sj.job()
		if err == nil && j != nil {
			err = j.Validate(svc.now())
		}
		switch {
		case err != nil:
			skipped = append(skipped, fmt.Sprintf("%s (%s): %v", sj.ID, sj.Name, err))
			continue
		case j == nil:
			continue
		}
		// Temporal failing is not the job's fault: keep the file for the next start.
		if _, err := svc.Add(ctx, *j); err != nil {
			return imported, skipped, fmt.Errorf("import job %s: %w (%s left in place)", sj.ID, err, path)
		}
		imported++
	}
	if err := os.Rename(path, path+".imported"); err != nil {
		return imported, skipped, fmt.Errorf("rename %s after import: %w", path, err)
	}
	return imported, skipped, nil
}
