package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/workers"
)

// Without NANOBOT_WORKER_DEPLOYMENT there is no deployment to show or promote: a usage error naming the variable.
func TestDeploymentNeedsItsVariable(t *testing.T) {
	t.Setenv(workers.DeploymentEnv, "")
	var out, errOut bytes.Buffer
	code := run([]string{"deployment", "promote"}, strings.NewReader(""), &out, &errOut)
	require.Equal(t, 2, code, errOut.String())
	require.Contains(t, errOut.String(), workers.DeploymentEnv+" is not set")
}
