// Package sandboxfwd is the sandbox's forwarder: inside bwrap's network
// namespace only a loopback exists, so this binary, started first as the
// sandbox's command, listens on it, relays each connection to the worker's
// proxy socket bound in, and runs the real command as its child.
package sandboxfwd

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Paths inside the sandbox, fixed so its argv, its environment and the forwarder agree.
const (
	Path   = "/run/nanobot-sandbox/forward"
	Socket = "/run/nanobot-sandbox/proxy.sock"
	// Port is where the forwarder listens on the sandbox's own loopback.
	Port = 3128
)

// A binary started as Path is the forwarder, decided in an init of a package with few imports so it runs
// before most of the binary's (they were most of an exec's cost); every binary that starts a sandbox imports it.
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

// Binary is this process's executable, bound into the sandbox as the forwarder.
var Binary = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("sandbox proxy: cannot find this binary to forward from inside: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
})

// run listens on the sandbox's loopback, relays each connection to the
// proxy's socket, and runs the command after "--" as its child with the
// same stdio, exiting as it exits.
func run(args []string) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, "nanobot sandbox forwarder: usage: "+Path+" -- command [args…]")
		return 2
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(Port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "nanobot sandbox: the network proxy cannot listen inside: %v\n", err)
		return 126
	}
	go forward(ln)
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "nanobot sandbox: %v\n", err)
		return 127
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	_ = cmd.Wait()
	signal.Stop(sigs)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() { // die of the same signal, so the outside sees what the command died of
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// forward relays each connection on ln to the proxy's socket.
func forward(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			up, err := net.Dial("unix", Socket)
			if err != nil {
				fmt.Fprintf(os.Stderr, "nanobot sandbox: the network proxy is gone: %v\n", err)
				_ = c.Close()
				return
			}
			Relay(c, c, up)
		}()
	}
}

// Relay copies both ways until both directions end, passing each end's close on as a half-close.
func Relay(client net.Conn, fromClient io.Reader, upstream net.Conn) {
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

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
