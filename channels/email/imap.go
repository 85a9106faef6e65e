package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-message/charset"

	"github.com/nanobot-durable/nanobot/channels"
)

// maxRawMail is how much of one mail is read; the rest of a bigger one
// (attachments, mostly) is cut off and the mail read as far as it goes.
const maxRawMail = 32 << 20

// mailbox is one logged-in IMAP connection with the mailbox selected.
type mailbox struct {
	client   *imapclient.Client
	idle     bool   // the server offers IDLE
	validity uint32 // UIDVALIDITY: UIDs name the same mails only under the same one
	news     chan struct{}
	stop     func() bool
}

// connect dials, logs in and selects the mailbox.
func (c *Channel) connect(ctx context.Context) (*mailbox, error) {
	news := make(chan struct{}, 1)
	opts := &imapclient.Options{
		Dialer:    &net.Dialer{Timeout: callTimeout},
		TLSConfig: &tls.Config{ServerName: c.cfg.IMAPHost},
		// EXISTS while idling: new mail. The buffer keeps one that came
		// between a check and the next IDLE.
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					select {
					case news <- struct{}{}:
					default:
					}
				}
			},
		},
		WordDecoder: &mime.WordDecoder{CharsetReader: charset.Reader},
	}
	addr := net.JoinHostPort(c.cfg.IMAPHost, strconv.Itoa(c.cfg.IMAPPort))
	var cl *imapclient.Client
	var err error
	if c.cfg.IMAPUseSSL {
		cl, err = imapclient.DialTLS(addr, opts)
	} else {
		cl, err = imapclient.DialInsecure(addr, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to IMAP %s: %w", addr, err)
	}
	mb := &mailbox{client: cl, news: news}
	mb.stop = context.AfterFunc(ctx, func() { _ = cl.Close() }) // a blocked command ends with ctx
	if err := cl.Login(c.cfg.IMAPUsername, c.cfg.IMAPPassword).Wait(); err != nil {
		mb.close()
		return nil, fmt.Errorf("IMAP login as %s at %s: %w", c.cfg.IMAPUsername, addr, err)
	}
	sel, err := cl.Select(c.cfg.mailbox(), nil).Wait()
	if err != nil {
		mb.close()
		return nil, fmt.Errorf("IMAP select %s: %w", c.cfg.mailbox(), err)
	}
	mb.validity = sel.UIDValidity
	mb.idle = cl.Caps().Has(imap.CapIdle) || cl.Caps().Has(imap.CapIMAP4rev2)
	c.setState(true, mb.idle)
	return mb, nil
}

func (mb *mailbox) close() {
	mb.stop()
	_ = mb.client.Logout().Wait()
	_ = mb.client.Close()
}

// receive reads the mailbox until ctx ends, reconnecting whenever the
// connection is lost; mail that came meanwhile is still unseen and read
// then. A mailbox checked resets the backoff.
func (c *Channel) receive(ctx context.Context, mb *mailbox) {
	c.Reconnect(ctx, channels.Backoff{Max: maxBackoff, Healthy: time.Nanosecond}, func(ctx context.Context) error {
		if mb == nil {
			var err error
			if mb, err = c.connect(ctx); err != nil {
				c.setState(false, false)
				return fmt.Errorf("email: cannot reach the mailbox: %w", err)
			}
			c.Log.Info("email mailbox reconnected", "idle", mb.idle)
		}
		err := c.serve(ctx, mb, c.Up)
		mb.close()
		mb = nil
		c.setState(false, false)
		return fmt.Errorf("email: IMAP connection lost: %w", err)
	})
}

// serve checks the mailbox, waits for news, and again, until an error.
func (c *Channel) serve(ctx context.Context, mb *mailbox, healthy func()) error {
	for {
		retry, err := c.check(ctx, mb)
		if err != nil {
			return err
		}
		healthy()
		if err := c.wait(ctx, mb, retry); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// wait returns when there may be new mail: the server said so during
// IDLE, or the poll interval passed. A mail the agent could not take is
// tried again after the poll interval even while idling.
func (c *Channel) wait(ctx context.Context, mb *mailbox, retry bool) error {
	if !mb.idle {
		select {
		case <-ctx.Done():
		case <-mb.client.Closed():
			return errors.New("the server closed the connection")
		case <-time.After(c.cfg.pollInterval()):
		}
		return nil
	}
	idle, err := mb.client.Idle()
	if err != nil {
		return fmt.Errorf("IMAP IDLE: %w", err)
	}
	timeout := idleRefresh
	if retry {
		timeout = c.cfg.pollInterval()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-mb.news:
	case <-timer.C:
	case <-mb.client.Closed():
	}
	if err := idle.Close(); err != nil {
		return fmt.Errorf("IMAP IDLE end: %w", err)
	}
	if err := idle.Wait(); err != nil {
		return fmt.Errorf("IMAP IDLE: %w", err)
	}
	return nil
}

// check takes in every unseen mail not handled before, oldest first. It
// reports a mail the agent could not take (it stays unseen, for later).
func (c *Channel) check(ctx context.Context, mb *mailbox) (retry bool, err error) {
	select {
	case <-mb.news: // this check sees it
	default:
	}
	found, err := mb.client.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return false, fmt.Errorf("IMAP search unseen: %w", err)
	}
	uids := found.AllUIDs()
	if len(uids) == 0 {
		return false, nil
	}
	heads, err := mb.client.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, Envelope: true, RFC822Size: true}).Collect()
	if err != nil {
		return false, fmt.Errorf("IMAP fetch envelopes: %w", err)
	}
	slices.SortFunc(heads, func(a, b *imapclient.FetchMessageBuffer) int { return int(a.UID) - int(b.UID) })
	for _, h := range heads {
		if ctx.Err() != nil {
			return false, nil
		}
		key := mailKey(mb.validity, h)
		if c.Seen().Has(key) {
			continue // markSeen off, a restart between taking it in and marking it, or another gateway's
		}
		raw, err := fetchRaw(mb.client, h.UID, h.RFC822Size)
		if err != nil {
			return false, err
		}
		out := c.take(ctx, h.UID, key, raw)
		switch out {
		case retryLater:
			return true, nil // keep the order: later mails wait for this one
		case elsewhere:
			continue
		case skipped, rejected:
			c.Seen().Add(key) // never read again (one the agent took, TakeIn recorded)
		}
		if err := c.afterTaken(mb, h.UID, out); err != nil {
			return false, err
		}
	}
	return false, nil
}

// mailKey names a mail across restarts: its Message-ID, or its UID in
// this mailbox when it has none.
func mailKey(validity uint32, h *imapclient.FetchMessageBuffer) string {
	if h.Envelope != nil && h.Envelope.MessageID != "" {
		return "mid:" + h.Envelope.MessageID
	}
	return fmt.Sprintf("uid:%d:%d", validity, h.UID)
}

// fetchRaw reads one mail without marking it seen, at most maxRawMail bytes.
func fetchRaw(cl *imapclient.Client, uid imap.UID, size int64) ([]byte, error) {
	section := &imap.FetchItemBodySection{Peek: true}
	if size > maxRawMail {
		section.Partial = &imap.SectionPartial{Offset: 0, Size: maxRawMail}
	}
	msgs, err := cl.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil, fmt.Errorf("IMAP fetch mail %d: %w", uid, err)
	}
	for _, m := range msgs {
		if m.UID == uid {
			return m.FindBodySection(section), nil
		}
	}
	return nil, nil // expunged meanwhile: an empty mail, dropped as unreadable
}

// afterTaken marks the mail seen (markSeen) and applies postAction to it.
func (c *Channel) afterTaken(mb *mailbox, uid imap.UID, out outcome) error {
	set := imap.UIDSetNum(uid)
	if c.cfg.MarkSeen && out != rejected {
		flags := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}
		if err := mb.client.Store(set, flags, nil).Close(); err != nil {
			return fmt.Errorf("IMAP mark mail %d seen: %w", uid, err)
		}
	}
	if out != delivered && c.cfg.PostActionIgnoreSkipped {
		return nil
	}
	switch c.cfg.PostAction {
	case "move":
		if _, err := mb.client.Move(set, c.cfg.PostActionMoveMailbox).Wait(); err != nil {
			c.Log.Warn("email: postAction move failed", "uid", uid, "to", c.cfg.PostActionMoveMailbox, "error", err)
		}
	case "delete":
		flags := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
		if err := mb.client.Store(set, flags, nil).Close(); err != nil {
			c.Log.Warn("email: postAction delete failed", "uid", uid, "error", err)
			return nil
		}
		var err error
		switch {
		case mb.client.Caps().Has(imap.CapUIDPlus):
			err = mb.client.UIDExpunge(set).Close()
		case c.cfg.PostActionExpunge:
			err = mb.client.Expunge().Close()
		}
		if err != nil {
			c.Log.Warn("email: postAction expunge failed", "uid", uid, "error", err)
		}
	}
	return nil
}
