package email

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/nanobot-durable/nanobot/channels"
)

// sendSMTP hands one mail to the SMTP server: implicit TLS (smtpUseSsl),
// STARTTLS (smtpUseTls) or plain, then AUTH PLAIN, MAIL, RCPT, DATA. One
// connection per mail, as nanobot does.
func (c *Channel) sendSMTP(ctx context.Context, from, to string, raw []byte) error {
	addr := net.JoinHostPort(c.cfg.SMTPHost, strconv.Itoa(c.cfg.SMTPPort))
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("connect to SMTP %s: %w", addr, err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	tlsConfig := &tls.Config{ServerName: c.cfg.SMTPHost}
	var cl *smtp.Client
	switch {
	case c.cfg.SMTPUseSSL:
		cl = smtp.NewClient(tls.Client(conn, tlsConfig))
	case c.cfg.SMTPUseTLS:
		if cl, err = smtp.NewClientStartTLS(conn, tlsConfig); err != nil {
			_ = conn.Close()
			return fmt.Errorf("SMTP STARTTLS with %s: %w", addr, err)
		}
	default:
		cl = smtp.NewClient(conn)
	}
	defer cl.Close()
	cl.CommandTimeout, cl.SubmissionTimeout = callTimeout, callTimeout
	if c.cfg.SMTPUsername != "" {
		if err := cl.Auth(sasl.NewPlainClient("", c.cfg.SMTPUsername, c.cfg.SMTPPassword)); err != nil {
			return fmt.Errorf("SMTP login as %s at %s: %w", c.cfg.SMTPUsername, addr, err)
		}
	}
	if err := cl.SendMail(from, []string{to}, bytes.NewReader(raw)); err != nil {
		return fmt.Errorf("SMTP send to %s via %s: %w", to, addr, err)
	}
	_ = cl.Quit()
	return nil
}

// greylistWait is how long a mail a server put off (4xx) waits: greylisting
// servers take a retry after a few minutes, sooner is refused again.
const greylistWait = time.Minute

// sendError tells delivery what an SMTP failure means: a 5xx answer is
// final (the recipient does not exist, the server will not relay, the
// login is wrong), a 4xx one is worth another try later; a network error
// is retried with the usual backoff.
func sendError(err error) error {
	if err == nil {
		return nil
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		switch {
		case se.Code >= 500:
			return &channels.SendError{Err: err, Permanent: true}
		case se.Code >= 400:
			return &channels.SendError{Err: err, RetryAfter: greylistWait}
		}
	}
	return err
}
