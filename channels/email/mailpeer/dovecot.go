// Package mailpeer runs the mail servers the Email channel's tests talk
// to: a real Dovecot IMAP server (Debian's dovecot-imapd, started
// unprivileged with a throwaway config) holding one mailbox, and an SMTP
// server (go-smtp's) that records every mail it is handed.
package mailpeer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/nanobot-durable/nanobot/internal/peer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
)

// The mailbox's login.
const (
	User     = "bot@example.com"
	Password = "imap-test-password"
)

// IMAP is a running Dovecot serving one mailbox over plain IMAP on 127.0.0.1.
type IMAP struct {
	Host string
	Port int
	User string
	Pass string

	t    testing.TB
	bin  string
	dir  string
	conf string
	cmd  *exec.Cmd
	exit chan struct{}
}

// Options change the server.
type Options struct {
	// NoIdle leaves IDLE out of the capabilities: clients must poll.
	NoIdle bool
}

// StartIMAP starts Dovecot for the test; where Dovecot is not installed
// (e2e/dovecot.sh installs it; make test runs that) or cannot run, the peer
// is missing: the test skips locally and fails under CI.
func StartIMAP(t testing.TB, opts ...Options) *IMAP {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	bin := findDovecot()
	if bin == "" {
		peer.Missing(t, peer.Dovecot, "dovecot is not installed: run make dovecot (e2e/dovecot.sh), or apt-get install dovecot-imapd")
	}
	if v := dovecotVersion(bin); !strings.HasPrefix(v, "2.3") {
		peer.Missing(t, peer.Dovecot, fmt.Sprintf("%s is dovecot %s: mailpeer writes Dovecot 2.3's config only (install dovecot-imapd 2.3)", bin, v))
	}
	ids, err := runAs()
	if err != nil {
		peer.Missing(t, peer.Dovecot, fmt.Sprintf("dovecot cannot run here: %v (install dovecot-imapd, which makes the dovecot and dovenull users)", err))
	}
	dir, err := os.MkdirTemp("", "mailpeer-")
	if err != nil {
		t.Fatalf("mailpeer: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	m := &IMAP{Host: "127.0.0.1", Port: testenv.FreePort(t), User: User, Pass: Password, t: t, bin: bin, dir: dir}
	if err := m.writeConfig(ids, o); err != nil {
		t.Fatalf("mailpeer: %v", err)
	}
	m.start()
	peer.Used(t, peer.Dovecot)
	t.Cleanup(func() {
		m.stop()
		if t.Failed() {
			if log, err := os.ReadFile(filepath.Join(dir, "dovecot.log")); err == nil {
				t.Logf("dovecot log:\n%s", log)
			}
		}
	})
	return m
}

// Restart kills Dovecot and starts it again on the same port with the same
// mails: every client connection is cut.
func (m *IMAP) Restart() {
	m.t.Helper()
	m.stop()
	m.start()
}

func (m *IMAP) start() {
	m.t.Helper()
	cmd := exec.Command(m.bin, "-F", "-c", m.conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so stop takes every Dovecot process at once;
	// gone with the test binary.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		m.t.Fatalf("mailpeer: start dovecot: %v", err)
	}
	m.cmd, m.exit = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(m.exit) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := greeting(m.Addr()); err == nil {
			return
		} else if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(m.dir, "dovecot.log"))
			m.t.Fatalf("mailpeer: dovecot did not answer on %s: %v\n%s\n%s", m.Addr(), err, out.String(), log)
		}
		select {
		case <-m.exit:
			log, _ := os.ReadFile(filepath.Join(m.dir, "dovecot.log"))
			m.t.Fatalf("mailpeer: dovecot exited: %s\n%s", out.String(), log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop kills every Dovecot process: client connections drop as in a
// crash (a graceful stop keeps them for seconds), the mails stay on disk.
func (m *IMAP) stop() {
	if m.cmd == nil || m.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	<-m.exit
	m.cmd = nil
	// The login and mail processes die with the group; wait until the port is free.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l, err := net.Listen("tcp", m.Addr())
		if err == nil {
			l.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Addr is host:port.
func (m *IMAP) Addr() string { return net.JoinHostPort(m.Host, strconv.Itoa(m.Port)) }

// Deliver puts a raw mail (CRLF line ends) into INBOX, unseen, by APPEND.
func (m *IMAP) Deliver(raw []byte) {
	m.t.Helper()
	if err := m.session(func(c *imapclient.Client) error {
		cmd := c.Append("INBOX", int64(len(raw)), nil)
		if _, err := cmd.Write(raw); err != nil {
			return err
		}
		if err := cmd.Close(); err != nil {
			return err
		}
		_, err := cmd.Wait()
		return err
	}); err != nil {
		m.t.Fatalf("mailpeer: deliver: %v", err)
	}
}

// Unseen counts the mails in INBOX not flagged \Seen.
func (m *IMAP) Unseen() int {
	m.t.Helper()
	var n int
	if err := m.session(func(c *imapclient.Client) error {
		st, err := c.Status("INBOX", &imap.StatusOptions{NumUnseen: true}).Wait()
		if err == nil && st.NumUnseen != nil {
			n = int(*st.NumUnseen)
		}
		return err
	}); err != nil {
		m.t.Fatalf("mailpeer: status: %v", err)
	}
	return n
}

// Count is the number of mails in a mailbox.
func (m *IMAP) Count(mailbox string) int {
	m.t.Helper()
	var n int
	if err := m.session(func(c *imapclient.Client) error {
		st, err := c.Status(mailbox, &imap.StatusOptions{NumMessages: true}).Wait()
		if err == nil && st.NumMessages != nil {
			n = int(*st.NumMessages)
		}
		return err
	}); err != nil {
		m.t.Fatalf("mailpeer: status %s: %v", mailbox, err)
	}
	return n
}

// CreateMailbox makes a mailbox beside INBOX.
func (m *IMAP) CreateMailbox(name string) {
	m.t.Helper()
	if err := m.session(func(c *imapclient.Client) error { return c.Create(name, nil).Wait() }); err != nil {
		m.t.Fatalf("mailpeer: create %s: %v", name, err)
	}
}

func (m *IMAP) session(do func(c *imapclient.Client) error) error {
	c, err := imapclient.DialInsecure(m.Addr(), nil)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Login(m.User, m.Pass).Wait(); err != nil {
		return err
	}
	if err := do(c); err != nil {
		return err
	}
	return c.Logout().Wait()
}

func findDovecot() string {
	if p, err := exec.LookPath("dovecot"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/dovecot", "/usr/local/sbin/dovecot"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

func dovecotVersion(bin string) string {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "unknown"
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return v
}

// ids are the users Dovecot runs as.
type ids struct {
	Internal, InternalGroup, Login string
	MailUID, MailGID               int
}

// runAs picks the users: the current one when not root (Dovecot then runs
// everything as it); as root, the dovecot and dovenull users the package
// made, since Dovecot refuses to run its login and mail processes as root.
func runAs() (ids, error) {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err != nil {
			return ids{}, err
		}
		g, err := user.LookupGroupId(u.Gid)
		if err != nil {
			return ids{}, err
		}
		return ids{u.Username, g.Name, u.Username, os.Geteuid(), os.Getegid()}, nil
	}
	dv, err := user.Lookup("dovecot")
	if err != nil {
		return ids{}, fmt.Errorf("running as root needs the dovecot user: %w", err)
	}
	if _, err := user.Lookup("dovenull"); err != nil {
		return ids{}, fmt.Errorf("running as root needs the dovenull user: %w", err)
	}
	g, err := user.LookupGroupId(dv.Gid)
	if err != nil {
		return ids{}, err
	}
	uid, _ := strconv.Atoi(dv.Uid)
	gid, _ := strconv.Atoi(dv.Gid)
	return ids{"dovecot", g.Name, "dovenull", uid, gid}, nil
}

var confTemplate = template.Must(template.New("dovecot.conf").Parse(`# mailpeer's throwaway Dovecot {{.Version}} config
base_dir = {{.Dir}}/run
state_dir = {{.Dir}}/state
log_path = {{.Dir}}/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
protocols = imap
listen = 127.0.0.1
default_internal_user = {{.IDs.Internal}}
default_internal_group = {{.IDs.InternalGroup}}
default_login_user = {{.IDs.Login}}
first_valid_uid = 1
{{- if .NoIdle}}
imap_capability = IMAP4rev1 SASL-IR LITERAL+ ENABLE UIDPLUS MOVE NAMESPACE UNSELECT
{{- end}}
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {{.Dir}}/passwd
}
userdb {
  driver = static
  args = uid={{.IDs.MailUID}} gid={{.IDs.MailGID}} home={{.Dir}}/home/%u
}
mail_location = maildir:~/Maildir
# no chroot: an unprivileged Dovecot may not
service anvil {
  chroot =
}
service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = {{.Port}}
  }
  inet_listener imaps {
    port = 0
  }
}
`))

func (m *IMAP) writeConfig(who ids, o Options) error {
	home := filepath.Join(m.dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(m.dir, 0o755); err != nil { // the mail user walks into it
		return err
	}
	if err := os.Chown(home, who.MailUID, who.MailGID); err != nil {
		return fmt.Errorf("give the mail home to uid %d: %w", who.MailUID, err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "passwd"), []byte(User+":{PLAIN}"+Password+"\n"), 0o644); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := confTemplate.Execute(&buf, map[string]any{
		"Version": dovecotVersion(m.bin), "Dir": m.dir, "IDs": who, "Port": m.Port, "NoIdle": o.NoIdle,
	}); err != nil {
		return err
	}
	m.conf = filepath.Join(m.dir, "dovecot.conf")
	return os.WriteFile(m.conf, buf.Bytes(), 0o644)
}

// greeting reads the server's "* OK" line.
func greeting(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "* OK") {
		return errors.New("unexpected greeting: " + line)
	}
	return nil
}
