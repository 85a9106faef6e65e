// Package sandboxfwd is the sandbox's forwarder: inside bwrap's network
// namespace only a loopback exists, so this binary, started first as the
// sandbox's command, listens on it, relays each connection to the worker's
// proxy socket bound in, and runs the real command as its child.
//
// It imports only the runtime's basics (os, syscall, io, strings, strconv;
// not net, not path/filepath), so that its init comes before almost all of
// the binary's, which took most of a sandboxed exec's time.
package sandboxfwd

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// Paths inside the sandbox, fixed so its argv, its environment and the forwarder agree.
const (
	Path   = "/run/nanobot-sandbox/forward"
	Socket = "/run/nanobot-sandbox/proxy.sock"
	// Port is where the forwarder listens on the sandbox's own loopback.
	Port = 3128
)

// A binary started as Path is the forwarder; every binary that starts a sandbox imports this package.
func init() {
	if len(os.Args) > 1 && os.Args[0] == Path {
		os.Exit(run(os.Args[1:]))
	}
}

// Env points the usual proxy variables at the forwarder; the sandbox's own
// loopback (a server a command started inside) stays direct.
func Env() [][2]string {
	proxy := "http://127.0.0.1:" + strconv.Itoa(Port)
	var env [][2]string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"} {
		env = append(env, [2]string{k, proxy})
	}
	env = append(env, [2]string{"NO_PROXY", "localhost,127.0.0.1,::1"})
	for _, kv := range env[:4] {
		env = append(env, [2]string{strings.ToLower(kv[0]), kv[1]})
	}
	return env
}

// run listens on the sandbox's loopback, relays each connection to the
// proxy's socket, and runs the command after "--" as its child with the
// same stdio, exiting as it exits.
func run(args []string) int {
	if len(args) < 2 || args[0] != "--" {
		say("usage: " + Path + " -- command [args…]")
		return 2
	}
	ln, err := listen()
	if err != nil {
		say("the network proxy cannot listen inside: " + err.Error())
		return 126
	}
	go forward(ln)
	prog, err := lookPath(args[1])
	if err != nil {
		say(args[1] + ": " + err.Error())
		return 127
	}
	proc, err := os.StartProcess(prog, args[1:], &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		say(args[1] + ": " + err.Error())
		return 126
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			_ = proc.Signal(s)
		}
	}()
	state, err := proc.Wait()
	signal.Stop(sigs)
	if err != nil {
		say(err.Error())
		return 126
	}
	ws, _ := state.Sys().(syscall.WaitStatus)
	if ws.Signaled() { // die of the same signal, so the outside sees what the command died of
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func say(msg string) { _, _ = os.Stderr.WriteString("nanobot sandbox: " + msg + "\n") }

// lookPath finds a command without a slash on $PATH, as execvp would.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range strings.Split(os.Getenv("PATH"), ":") {
		if dir == "" {
			dir = "."
		}
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("command not found")
}

// listen opens the forwarder's port on the sandbox's loopback (raw sockets: the net package would init too late).
func listen() (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	if err := syscall.Listen(fd, syscall.SOMAXCONN); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// forward relays each connection accepted on ln to the proxy's socket.
func forward(ln int) {
	for {
		c, _, err := syscall.Accept4(ln, syscall.SOCK_CLOEXEC)
		if errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.ECONNABORTED) {
			continue
		}
		if err != nil {
			return
		}
		go func() {
			client := newFDConn(c, "client")
			up, err := dialProxy()
			if err != nil {
				say("the network proxy is gone: " + err.Error())
				_ = client.Close()
				return
			}
			Relay(client, client, up)
		}()
	}
}

func dialProxy() (*fdConn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: Socket})
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	return newFDConn(fd, "proxy"), nil
}

// fdConn is a connected socket as a file whose write side can close alone.
type fdConn struct {
	*os.File
	fd int
}

func newFDConn(fd int, name string) *fdConn {
	return &fdConn{File: os.NewFile(uintptr(fd), name), fd: fd}
}

func (c *fdConn) CloseWrite() error { return syscall.Shutdown(c.fd, syscall.SHUT_WR) }

// Relay copies both ways until both directions end, passing each end's close on as a half-close.
func Relay(client io.ReadWriteCloser, fromClient io.Reader, upstream io.ReadWriteCloser) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(upstream, fromClient)
		closeWrite(upstream)
		close(done)
	}()
	_, _ = io.Copy(client, upstream)
	closeWrite(client)
	<-done
	_ = client.Close()
	_ = upstream.Close()
}

func closeWrite(c io.Closer) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
