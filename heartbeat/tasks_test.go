package heartbeat

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTheTemplateHasNoActiveTasks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "templates", "workspace", "HEARTBEAT.md"))
	require.NoError(t, err)
	require.Empty(t, ActiveTasks(string(data)))
}

func TestActiveTasksSection(t *testing.T) {
	md := "# Heartbeat Tasks\n\n## Active Tasks\n\n<!-- add below -->\n- check the build\n  - and the deploy\n\n### Details\nrun make\n\n## Completed\n- old task\n"
	require.Equal(t, "- check the build\n  - and the deploy\n### Details\nrun make", ActiveTasks(md))
	require.Empty(t, ActiveTasks("# Tasks\n- not in the section\n"))
	require.Empty(t, ActiveTasks("## Active Tasks\n<!--\nmulti-line\n-->\n\n## Completed\n- x\n"))
}
