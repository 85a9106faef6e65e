package channels

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadJSONBoundsTheBody: a body within the limit is decoded; a larger
// one is refused as too large, a broken one as not JSON.
func TestReadJSONBoundsTheBody(t *testing.T) {
	read := func(body string) (map[string]string, error) {
		var v map[string]string
		err := ReadJSON(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)), 16, &v)
		return v, err
	}
	v, err := read(`{"a":"b"}`)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "b"}, v)
	_, err = read(`{"a":"` + strings.Repeat("x", 20) + `"}`)
	var tooLarge *http.MaxBytesError
	require.True(t, errors.As(err, &tooLarge), "%v", err)
	_, err = read(`{"a":`)
	require.Error(t, err)
}
