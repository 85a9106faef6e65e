package tools

import (
	"fmt"
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
	sandboxRunDir      = "/run/nanobot-sandbox"
	sandboxForwarder   = sandboxRunDir + "/forward"
	sandboxProxySocket = sandboxRunDir + "/proxy.sock"
	// sandboxProxyPort is where the forwarder listens on the sandbox's own loopback.
	sandboxProxyPort = 3128
)

// A binary started as the forwarder's path is the forwarder, before anything else of it runs:
// nanobot and each test binary that starts a sandbox bind themselves in, so none needs a hook of its own.
func init() {
	if len(os.Args) > 1 && os.Args[0] == sandboxForwarder {
		os.Exit(runForwarder(os.Args[1:]))
	}
}

// sandboxProxyEnv points the usual proxy variables at the forwarder; the
// sandbox's own loopback (a server a command started inside) stays direct.
func sandboxProxyEnv() [][2]string {
	proxy := "http://127.0.0.1:" + strconv.Itoa(sandboxProxyPort)
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

// sandboxForwarderBinary is this process's executable, bound into the sandbox as the forwarder.
var sandboxForwarderBinary = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("sandbox proxy: cannot find this binary to forward from inside: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
})

// runForwarder listens on the sandbox's loopback, relays each connection
// to the proxy's socket, and runs the command after "--" as its child with
// the same stdio, exiting as it exits.
func runForwarder(args []string) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(os.Stderr, "nanobot sandbox forwarder: usage: "+sandboxForwarder+" -- command [args…]")
		return 2
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(sandboxProxyPort)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "nanobot sandbox: the network proxy cannot listen inside: %v\n", err)
		return 126
	}
	go forwardConnections(ln)
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

// forwardConnections relays each connection on ln to the proxy's socket.
func forwardConnections(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			up, err := net.Dial("unix", sandboxProxySocket)
			if err != nil {
				fmt.Fprintf(os.Stderr, "nanobot sandbox: the network proxy is gone: %v\n", err)
				_ = c.Close()
				return
			}
			relay(c, c, up)
		}()
	}
}
