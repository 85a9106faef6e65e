package mailpeer

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// The SMTP server's login.
const (
	SMTPUser     = "bot@example.com"
	SMTPPassword = "smtp-test-password"
)

// Mail is one mail the SMTP server took.
type Mail struct {
	From   string
	To     []string
	Raw    []byte
	Header mail.Header
	Text   string // the text/plain part
	HTML   string // the text/html part
	Files  []File
}

// File is an attachment of a recorded mail.
type File struct {
	Name, ContentType string
	Data              []byte
}

// SMTP is a go-smtp server on 127.0.0.1 that records every mail.
type SMTP struct {
	Host string
	Port int
	User string
	Pass string

	mu    sync.Mutex
	mails []Mail
	fails []*smtp.SMTPError // answers for the next DATA commands
}

// StartSMTP starts the server for the test: AUTH PLAIN with SMTPUser and
// SMTPPassword, no TLS.
func StartSMTP(t testing.TB) *SMTP {
	t.Helper()
	s := &SMTP{Host: "127.0.0.1", User: SMTPUser, Pass: SMTPPassword}
	srv := smtp.NewServer(s)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailpeer: smtp listen: %v", err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

// Addr is host:port.
func (s *SMTP) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// Mails are the mails taken so far, in order.
func (s *SMTP) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// FailNext makes the next DATA answer code (a 4xx or 5xx) instead of taking the mail.
func (s *SMTP) FailNext(code int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = append(s.fails, &smtp.SMTPError{Code: code, EnhancedCode: smtp.NoEnhancedCode, Message: msg})
}

// NewSession implements smtp.Backend.
func (s *SMTP) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{srv: s}, nil }

type session struct {
	srv    *SMTP
	authed bool
	from   string
	to     []string
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != ss.srv.User || pass != ss.srv.Pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "bad login"}
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s := ss.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.fails) > 0 {
		fail := s.fails[0]
		s.fails = s.fails[1:]
		return fail
	}
	m, err := readMail(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "unreadable mail: " + err.Error()}
	}
	m.From, m.To = ss.from, append([]string(nil), ss.to...)
	s.mails = append(s.mails, m)
	return nil
}

func (ss *session) Reset()        { ss.from, ss.to = "", nil }
func (ss *session) Logout() error { return nil }

// readMail splits a mail into its text, HTML and files.
func readMail(raw []byte) (Mail, error) {
	m := Mail{Raw: raw}
	e, err := message.Read(bytes.NewReader(raw))
	if e == nil {
		return m, err
	}
	m.Header = mail.Header{Header: e.Header}
	err = e.Walk(func(_ []int, part *message.Entity, err error) error {
		if err != nil {
			return err
		}
		ct, params, _ := part.Header.ContentType()
		if strings.HasPrefix(ct, "multipart/") {
			return nil
		}
		body, err := io.ReadAll(part.Body)
		if err != nil {
			return err
		}
		disp, dparams, _ := part.Header.ContentDisposition()
		switch {
		case disp == "attachment":
			name := dparams["filename"]
			if name == "" {
				name = params["name"]
			}
			m.Files = append(m.Files, File{Name: name, ContentType: ct, Data: body})
		case ct == "text/plain":
			m.Text += string(body)
		case ct == "text/html":
			m.HTML += string(body)
		default:
			return fmt.Errorf("unexpected part %s", ct)
		}
		return nil
	})
	return m, err
}

// Compose builds a raw mail with CRLF line ends: headers in the order
// given ("Key: value" each), then a plain text body. The headers are
// written as given, so a test can write broken ones.
func Compose(body string, headers ...string) []byte {
	var b strings.Builder
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n"))
	return []byte(b.String())
}
