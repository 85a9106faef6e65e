package integration

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// TestGenerateImageThroughTheGateway: a Discord user asks for a picture;
// the model calls generate_image, the gateway's tool asks aimock's OpenAI
// Images endpoint, saves the PNG under saveDir in the workspace and the
// image reaches Discord as an upload, before the model's closing words.
func TestGenerateImageThroughTheGateway(t *testing.T) {
	pic := redPNG(t)
	images := aimocktest.Start(t, aimocktest.Fixtures(t, map[string]any{
		"match":    map[string]any{"userMessage": "a red dot on white"},
		"response": map[string]any{"image": map[string]any{"b64Json": base64.StdEncoding.EncodeToString(pic)}},
	}))
	dev := testenv.StartDevServer(t)
	peer := discordpeer.New(t)
	peer.DM(discordDM)
	var toolResult string
	model := modeltest.New().Handle(func(req *modeltest.RecordedRequest) modeltest.Step {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			toolResult = last.Content
			return modeltest.Text("Here is your red dot.")
		}
		return modeltest.ToolCalls(modeltest.Call{ID: "call_img", Name: "generate_image",
			Args: `{"prompt":"a red dot on white","aspect_ratio":"16:9"}`})
	})
	defer model.Close()
	home := testenv.NewHome(t, model.URL(), map[string]any{
		"providers": map[string]any{
			"custom": map[string]any{"apiKey": "test-key", "apiBase": model.URL()},
			"openai": map[string]any{"apiKey": "sk-images", "apiBase": images.URL() + "/v1"},
		},
		"tools": map[string]any{"imageGeneration": map[string]any{
			"enabled": true, "provider": "openai", "model": "gpt-image-1", "saveDir": "pictures"}},
		"channels": map[string]any{"discord": map[string]any{"enabled": true, "token": discordpeer.Token, "apiBase": peer.URL(),
			"allowFrom": []string{discordAlice.ID}, "workingEmoji": ""}},
	})
	logs := startChannelGateway(t, home.Env(dev.Addr), "discord")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never identified\n%s", logs)

	peer.Say(discordpeer.Incoming{ChannelID: discordDM, Author: discordAlice, Content: "draw me a red dot"})
	var sent []discordpeer.File
	require.Eventually(t, func() bool {
		for _, m := range peer.Messages(discordDM) {
			if len(m.Files) > 0 {
				sent = m.Files
				return true
			}
		}
		return false
	}, 2*time.Minute, 50*time.Millisecond, "no image reached Discord: %+v\n%s", peer.Messages(discordDM), logs)
	require.Len(t, sent, 1)
	require.Equal(t, pic, sent[0].Data, "the generated image itself was uploaded")
	require.True(t, strings.HasPrefix(sent[0].Name, "img_") && strings.HasSuffix(sent[0].Name, ".png"), sent[0].Name)
	require.Eventually(t, func() bool {
		for _, m := range peer.Messages(discordDM) {
			if m.Content == "Here is your red dot." {
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "no closing answer\n%s", logs)

	found, err := filepath.Glob(filepath.Join(home.Workspace, "pictures", "*-*-*", sent[0].Name))
	require.NoError(t, err)
	require.Len(t, found, 1, "the image is kept under saveDir/YYYY-MM-DD in the workspace")
	saved := found[0]
	data, err := os.ReadFile(saved)
	require.NoError(t, err, "the image is kept under saveDir in the workspace")
	require.Equal(t, pic, data)
	var result struct {
		Artifacts []struct {
			Path string `json:"path"`
		} `json:"artifacts"`
		NextStep string `json:"next_step"`
	}
	require.NoError(t, json.Unmarshal([]byte(toolResult), &result), toolResult)
	require.Len(t, result.Artifacts, 1)
	require.Equal(t, saved, result.Artifacts[0].Path, "the model learns the path for follow-up edits")
	require.Contains(t, result.NextStep, "were sent to the user")

	reqs := images.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/v1/images/generations", reqs[0].Path)
	require.Equal(t, "Bearer sk-images", reqs[0].Header.Get("Authorization"))
	var body map[string]any
	reqs[0].JSON(t, &body)
	require.Equal(t, "1536x1024", body["size"], "16:9 asked for the landscape size")
}
