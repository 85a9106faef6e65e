package activities

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/protocol"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

func writePNG(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 2, 2))))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// TestBuildJournalsMediaAndTheModelSeesTheImage: a photo becomes an image
// part the model receives, every file a path line in the text; a model
// that refuses images is asked again with "[image omitted]" in its place.
func TestBuildJournalsMediaAndTheModelSeesTheImage(t *testing.T) {
	model := modeltest.New(
		modeltest.Error(400, "invalid_request_error", "Invalid content type. image_url is only supported by certain models."),
		modeltest.Text("a tiny black square"),
	)
	defer model.Close()
	a := newActivities(t, model)
	photo, doc := filepath.Join(a.Workspace, "photo.png"), filepath.Join(a.Workspace, "notes.txt")
	writePNG(t, photo)
	require.NoError(t, os.WriteFile(doc, []byte("plain text"), 0o644))

	in := step("t1", "what is this?")
	in.Message.Media = []string{photo, doc}
	_, err := a.set().Turn.Build(context.Background(), in)
	require.NoError(t, err)
	sess, err := a.Store.Load(context.Background(), "cli:t")
	require.NoError(t, err)
	user := sess.Messages[len(sess.Messages)-1]
	require.Equal(t, "what is this?\n[image: "+photo+"]\n[file: "+doc+"]", user.Content)
	require.Contains(t, string(user.ContentParts), `"url":"data:image/png;base64,`)

	env := activityEnv(a)
	val, err := env.ExecuteActivity(protocol.ActivityLLMCall, protocol.LLMCallInput{
		SessionKey: "cli:t", Turn: "t1", Iteration: 1, Route: in.Message.Route, Settings: testenv.Settings(protocol.Settings{Model: "m"})})
	require.NoError(t, err)
	var res protocol.LLMCallResult
	require.NoError(t, val.Get(&res))
	require.Equal(t, "a tiny black square", res.ContentPreview)

	reqs := model.Requests()
	require.Len(t, reqs, 2)
	first, second := string(reqs[0].Body), string(reqs[1].Body)
	require.Contains(t, first, `data:image/png;base64,`, "the image goes to the model")
	require.Contains(t, first, `[Runtime Context`, "the runtime context rides along as a text part")
	require.NotContains(t, second, `image_url`, "asked again without the image")
	require.Contains(t, second, imageOmitted)
	require.Contains(t, second, "[image: "+photo+"]", "the path stays in the text")
	require.Equal(t, 1, strings.Count(second, "what is this?"))
}

func TestUserContentWithoutImagesIsText(t *testing.T) {
	text, parts := userContent("hi", nil, nil)
	require.Equal(t, "hi", text)
	require.Nil(t, parts)
	text, parts = userContent("", []string{"/nope/missing.jpg"}, nil)
	require.Equal(t, "[file: /nope/missing.jpg]", text, "an unreadable file is named, never inlined")
	require.Nil(t, parts)
}
