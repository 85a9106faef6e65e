package channels

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSafeFileNameCannotLeaveMedia: a sender's name keeps its last element,
// safe characters and its end; what could climb out of media/ is gone.
func TestSafeFileNameCannotLeaveMedia(t *testing.T) {
	for in, want := range map[string]string{
		"report.pdf":            "report.pdf",
		"../../etc/passwd":      "passwd",
		`C:\Users\ann\cv 1.doc`: "cv_1.doc",
		"..":                    "",
		"":                      "",
		"._hidden.":             "hidden",
		"Grüße aus Köln.txt":    "Gr_e_aus_K_ln.txt",
	} {
		require.Equal(t, want, SafeFileName(in, 64), in)
	}
	long := strings.Repeat("a", 100) + ".tar.gz"
	require.Equal(t, strings.Repeat("a", 9)+".tar.gz", SafeFileName(long, 16), "the end, with the extension, is kept")
	require.Equal(t, "AgAD-x_1.y", SafeID("AgAD/-x_1.y?"))
}

// TestWithNotes: notes go below the text, one a line; none leave it as it is.
func TestWithNotes(t *testing.T) {
	require.Equal(t, " hi ", WithNotes(" hi ", nil))
	require.Equal(t, "hi\n[attachment: a.pdf - too large]", WithNotes("hi", []string{FileNote("a.pdf", "too large")}))
	require.Equal(t, "[attachment: b - download failed]", WithNotes("", []string{FileNote("b", "download failed")}))
}
