package integration

import (
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestMutualTLSTurn: temporal-dev serves its frontend with mTLS (a CA, a server and a
// client certificate the test makes); its own clients (the bootstrap that prints the
// ready line, the system worker, the Web UI) reach it with an identity of their own.
// A real nanobot given TEMPORAL_TLS_* completes a turn against the scripted model;
// without the client certificate the same command fails, saying why.
func TestMutualTLSTurn(t *testing.T) {
	certs := testenv.NewCerts(t)
	port, uiPort := testenv.FreePort(t), testenv.FreePort(t)
	cmd := exec.Command(testenv.DevServerBin(t), "--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--ui-port", strconv.Itoa(uiPort),
		"--log-level", "error", "--search-attribute", "NanobotSessionKey=Keyword", "--search-attribute", "NanobotChannel=Keyword",
		"--tls-cert", certs.ServerCert, "--tls-key", certs.ServerKey, "--tls-client-ca", certs.CA)
	logs := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "temporal-dev: server ") }, 90*time.Second, 50*time.Millisecond,
		"temporal-dev with mTLS never got ready (its bootstrap dials the frontend over TLS):\n%s", logs)
	ui := fmt.Sprintf("http://127.0.0.1:%d", uiPort)
	status, body := hostCall(t, "GET", ui+"/api/v1/namespaces", "127.0.0.1:"+strconv.Itoa(uiPort), "")
	require.Equal(t, http.StatusOK, status, "the Web UI reaches the frontend over mTLS: %s", body)
	require.Contains(t, body, `"default"`)

	model := modeltest.New(modeltest.Text("Hello over mTLS."))
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), nil)
	addr := "localhost:" + strconv.Itoa(port)
	out, errOut, code := runNanobot(t, home.Env(addr,
		"TEMPORAL_TLS_CLIENT_CERT_PATH="+certs.ClientCert, "TEMPORAL_TLS_CLIENT_KEY_PATH="+certs.ClientKey, "TEMPORAL_TLS_SERVER_CA_CERT_PATH="+certs.CA),
		"agent", "-m", "hello")
	require.Equal(t, 0, code, "stderr: %s", errOut)
	require.Equal(t, "Hello over mTLS.\n", out)
	require.Equal(t, 1, model.Count())

	_, errOut, code = runNanobot(t, home.Env(addr, "TEMPORAL_TLS_CA="+certs.CA), "agent", "-m", "hello again")
	require.NotEqual(t, 0, code, "the server requires a client certificate")
	require.Regexp(t, `(?i)tls|certificate`, errOut)
	t.Logf("without the client certificate: %s", strings.TrimSpace(errOut))
	_, errOut, code = runNanobot(t, home.Env(addr), "agent", "-m", "hello again")
	require.NotEqual(t, 0, code, "plaintext to a TLS frontend")
	require.Equal(t, 1, model.Count(), "no turn ran without the certificate")
	t.Logf("plaintext: %s", strings.TrimSpace(errOut))
}
