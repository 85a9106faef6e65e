package stores

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/memory"
	"github.com/nanobot-durable/nanobot/pairing"
	"github.com/nanobot-durable/nanobot/pgstore"
	"github.com/nanobot-durable/nanobot/session"
)

// ImportReport is what `nanobot db import` copied and what it found there already.
type ImportReport struct {
	Sessions, SessionsThere int
	Messages, Claims, Blobs int
	Usage, UsageThere       int
	Pending, Approved       int
	History                 int
	HistoryThere            bool
	DreamCursor             int
}

// String is the report as the command prints it.
func (r ImportReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sessions: %d copied (%d messages, %d claims, %d turn blobs), %d already there\n",
		r.Sessions, r.Messages, r.Claims, r.Blobs, r.SessionsThere)
	fmt.Fprintf(&b, "usage: %d calls copied, %d already there\n", r.Usage, r.UsageThere)
	fmt.Fprintf(&b, "pairing: %d pending codes and %d approved senders added\n", r.Pending, r.Approved)
	if r.HistoryThere {
		b.WriteString("memory history: the database has its own; left as it is\n")
	} else {
		fmt.Fprintf(&b, "memory history: %d entries copied, Dream's cursor at %d\n", r.History, r.DreamCursor)
	}
	return b.String()
}

// Import copies the JSONL home the config names into the database, once:
// a session, a usage call, a pairing code or sender the database already
// has is left as it is, and the memory history only goes into a database
// that has none, so running it again copies nothing. Channel dedupe files
// and media stay where they are.
func Import(ctx context.Context, cfg *config.Config, db *pgstore.DB, log *slog.Logger) (ImportReport, error) {
	var rep ImportReport
	files, err := OnFiles(cfg, log)
	if err != nil {
		return rep, err
	}
	if err := importSessions(ctx, files.Sessions.(*session.JSONLStore), db.Sessions(), &rep); err != nil {
		return rep, err
	}
	recs, bad, err := files.Usage.Since(time.Time{})
	if err != nil {
		return rep, err
	}
	if bad > 0 {
		log.Warn("usage lines that do not parse are not imported", "file", files.Usage.Where(), "lines", bad)
	}
	if rep.Usage, err = db.Usage().Import(ctx, recs); err != nil {
		return rep, err
	}
	rep.UsageThere = len(recs) - rep.Usage
	st, err := pairing.File{Path: files.Pairing.Path}.Read(ctx)
	if err != nil {
		return rep, err
	}
	if rep.Pending, rep.Approved, err = db.ImportPairing(ctx, st); err != nil {
		return rep, err
	}
	return rep, importHistory(ctx, files.Archive, db.Archive(), &rep)
}

func importSessions(ctx context.Context, from *session.JSONLStore, to *pgstore.Sessions, rep *ImportReport) error {
	infos, err := from.Sessions()
	if err != nil {
		return err
	}
	for _, info := range infos {
		sess, err := from.Load(ctx, info.Key)
		if err != nil {
			return err
		}
		claims, blobs, err := from.Export(info.Key)
		if err != nil {
			return err
		}
		copied, err := to.Import(ctx, sess, info.Modified, claims, blobs)
		if err != nil {
			return err
		}
		if !copied {
			rep.SessionsThere++
			continue
		}
		rep.Sessions++
		rep.Messages += len(sess.Messages)
		rep.Claims += len(claims)
		rep.Blobs += len(blobs)
	}
	return nil
}

func importHistory(ctx context.Context, from memory.Archive, to *pgstore.Archive, rep *ImportReport) error {
	entries, err := from.Entries(ctx)
	if err != nil {
		return err
	}
	cursor, err := from.Cursor(ctx)
	if err != nil {
		return err
	}
	if len(entries) == 0 && cursor == 0 {
		return nil
	}
	copied, err := to.Import(ctx, entries, cursor)
	if err != nil {
		return err
	}
	rep.HistoryThere = !copied
	if copied {
		rep.History, rep.DreamCursor = len(entries), cursor
	}
	return nil
}
