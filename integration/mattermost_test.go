package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/channels/mattermost/mattermostpeer"
	"github.com/nanobot-durable/nanobot/internal/testenv"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// The Mattermost conversation: a DM and a channel (ids are 26 characters).
const (
	mmDM   = "itestdm0000000000000000000"
	mmTown = "itesttown00000000000000000"
)

var (
	mmAlice = mattermostpeer.User{ID: "itestalice0000000000000000", Username: "alice"}
	mmBob   = mattermostpeer.User{ID: "itestbob000000000000000000", Username: "bob"}
)

// startMattermost runs the gateway against a fresh peer, Alice allowed, and
// waits for the event stream; block adds keys to channels.mattermost.
func startMattermost(t *testing.T, model *modeltest.Server, cfg map[string]any, block map[string]any) (*mattermostpeer.Peer, *testenv.Home, []string, outputs) {
	t.Helper()
	dev := testenv.StartDevServer(t)
	peer := mattermostpeer.New(t)
	peer.Channel(mmDM, mattermostpeer.TypeDirect)
	peer.Channel(mmTown, mattermostpeer.TypeOpen)
	b := map[string]any{"enabled": true, "serverUrl": peer.URL(), "token": mattermostpeer.Token, "allowFrom": []string{mmAlice.ID}}
	for k, v := range block {
		b[k] = v
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["channels"] = map[string]any{"mattermost": b}
	home := testenv.NewHome(t, model.URL(), cfg)
	env := home.Env(dev.Addr)
	logs := startChannelGateway(t, env, "mattermost")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "the gateway never opened the event stream\n%s", logs)
	return peer, home, env, logs
}

// mmPosted waits until the bot's last post in a channel (in thread root, if set) shows text.
func mmPosted(t *testing.T, peer *mattermostpeer.Peer, channel, root, text string, logs outputs) mattermostpeer.Post {
	t.Helper()
	var last mattermostpeer.Post
	require.Eventually(t, func() bool {
		for _, p := range peer.Posts(channel) {
			if p.RootID == root && p.Message == text {
				last = p
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "no post %q in %s/%s: %+v\n%s", text, channel, root, peer.Posts(channel), logs)
	return last
}

// TestMattermostGatewayConversation drives the real gateway binary through
// mattermostpeer: a DM is answered with reactions on and off; a channel
// post without a mention is left alone; a mention gets a tool round trip
// and its answer in a thread under it, the thread's own session.
func TestMattermostGatewayConversation(t *testing.T) {
	model := noteTaker("from mattermost", map[string]string{"hi from mattermost": "Hello, **Mattermost**."})
	defer model.Close()
	peer, home, env, logs := startMattermost(t, model, nil, nil)
	require.Contains(t, logs.String(), "  mattermost: @"+mattermostpeer.BotName)

	hi := peer.Say(mmAlice, mmDM, "", "hi from mattermost")
	mmPosted(t, peer, mmDM, "", "Hello, **Mattermost**.", logs)
	require.Eventually(t, func() bool {
		r := peer.Reactions(hi)
		return len(r) == 3 && r[0] == "+eyes" && strings.Join(r[1:], " ") != ""
	}, 30*time.Second, 50*time.Millisecond, "reactions: %v", peer.Reactions(hi))
	require.ElementsMatch(t, []string{"+eyes", "-eyes", "+white_check_mark"}, peer.Reactions(hi), "eyes on, then off with the answer; done on")
	require.Positive(t, peer.CallsTo("POST", "/api/v4/users/"+mattermostpeer.BotID+"/typing"), "typing was shown")
	requireChannelsUp(t, env, "mattermost")

	peer.Say(mmAlice, mmTown, "", "just chatting")
	mention := peer.Say(mmAlice, mmTown, "", "@"+mattermostpeer.BotName+" please save a note")
	mmPosted(t, peer, mmTown, mention, "Saved it to note.txt.", logs)
	data, err := os.ReadFile(filepath.Join(home.Workspace, "note.txt"))
	require.NoError(t, err)
	require.Equal(t, "from mattermost", string(data))
	require.Equal(t, 3, model.Count(), "the DM, the mention and its tool result; the chatter never reached the model")
	for _, p := range peer.Posts(mmTown) {
		require.Equal(t, mention, p.RootID, "everything the bot said is in the mention's thread")
	}

	_, msgs := sessionLines(t, home, "mattermost:"+mmTown+":"+mention)
	require.Equal(t, "please save a note", msgs[0].Content, "the mention was stripped; the thread has its own session")
	_, msgs = sessionLines(t, home, "mattermost:"+mmDM)
	require.Equal(t, "hi from mattermost", msgs[0].Content)
}

// TestMattermostGatewayPairsAStranger: a DM from someone not in allowFrom
// is answered with a pairing code and never reaches the model.
func TestMattermostGatewayPairsAStranger(t *testing.T) {
	model := answering(map[string]string{"hi from alice": "Hello, Alice."})
	defer model.Close()
	peer, _, _, logs := startMattermost(t, model, nil, nil)

	peer.Say(mmBob, mmDM, "", "let me in")
	require.Eventually(t, func() bool {
		posts := peer.Posts(mmDM)
		return len(posts) == 1 && strings.Contains(posts[0].Message, "Your pairing code is ")
	}, time.Minute, 50*time.Millisecond, "no pairing code: %+v\n%s", peer.Posts(mmDM), logs)
	peer.Say(mmAlice, mmDM, "", "hi from alice")
	mmPosted(t, peer, mmDM, "", "Hello, Alice.", logs)
	require.Equal(t, 1, model.Count(), "only Alice's DM reached the model")
	require.Len(t, peer.Posts(mmDM), 2, "one pairing code, one answer")
}

// TestMattermostGatewayStreamsByEditing: a slow answer is drawn by
// patching one post in place, each step the text so far, ending with the
// whole answer.
func TestMattermostGatewayStreamsByEditing(t *testing.T) {
	const answer = "One, two, three, four, five."
	model := modeltest.New(modeltest.Text(answer).ChunkDelay(1500 * time.Millisecond))
	defer model.Close()
	peer, _, _, logs := startMattermost(t, model, nil, nil)

	peer.Say(mmAlice, mmDM, "", "count slowly")
	post := mmPosted(t, peer, mmDM, "", answer, logs)
	require.Len(t, peer.Posts(mmDM), 1, "one post, drawn in place")
	require.GreaterOrEqual(t, len(post.Drawn), 2, "posted, then patched: %q", post.Drawn)
	require.NotEqual(t, answer, post.Drawn[0], "the post began with the start of the answer")
	for _, d := range post.Drawn {
		require.True(t, strings.HasPrefix(answer, d), "each step shows the text so far: %q", post.Drawn)
	}
	require.Equal(t, len(post.Drawn)-1, peer.CallsTo("PUT", "/api/v4/posts/"+post.ID+"/patch"))
}

// TestMattermostApprovalByReaction: a request asked in a mention's thread
// offers its answers as reactions; Alice's ✅ reaches the thread's session
// that asked, runs the call once, the answer arrives in the thread and the
// request says it was answered.
func TestMattermostApprovalByReaction(t *testing.T) {
	peer := mattermostpeer.New(t)
	peer.Channel(mmTown, mattermostpeer.TypeOpen)
	_, model, home, env := approvalSetup(t, map[string]any{"channels": map[string]any{"mattermost": map[string]any{
		"enabled": true, "serverUrl": peer.URL(), "token": mattermostpeer.Token, "allowFrom": []string{mmAlice.ID},
	}}})
	logs := startChannelGateway(t, env, "mattermost")
	require.Eventually(t, peer.Connected, time.Minute, 50*time.Millisecond, "no event stream\n%s", logs)
	scriptRiskyClean(model, "Cleaned the build.")
	mention := peer.Say(mmAlice, mmTown, "", "@"+mattermostpeer.BotName+" clean the build")

	var req mattermostpeer.Post
	require.Eventually(t, func() bool {
		for _, p := range peer.Posts(mmTown) {
			if p.RootID == mention && approvalIDRe.MatchString(p.Message) && len(peer.Reactions(p.ID)) >= 2 {
				req = p
				return true
			}
		}
		return false
	}, time.Minute, 50*time.Millisecond, "the request with its reactions; gateway:\n%s", logs)
	require.Contains(t, req.Message, "React to answer: :white_check_mark: Approve · :x: Deny")
	requireNotRun(t, home, model)

	peer.React(mmBob, req.ID, "white_check_mark")
	peer.React(mmAlice, req.ID, "white_check_mark")
	mmPosted(t, peer, mmTown, mention, "Cleaned the build.", logs)
	for _, p := range peer.Posts(mmTown) {
		if p.ID == req.ID {
			require.True(t, strings.HasSuffix(p.Message, "_Answered._"), p.Message)
			require.NotContains(t, p.Message, "React to answer")
		}
	}
	requireRanOnce(t, home, model)
}

// TestMattermostGatewayResumesAfterADrop: the socket drops; the channel
// reconnects naming its connection and sequence, and the server replays
// the post made meanwhile: it is answered, and a post redelivered after
// the resume is not answered again.
func TestMattermostGatewayResumesAfterADrop(t *testing.T) {
	model := answering(map[string]string{"before the drop": "Before.", "while it was down": "Meanwhile.", "after the drop": "After."})
	defer model.Close()
	peer, _, _, logs := startMattermost(t, model, nil, nil)

	before := peer.Say(mmAlice, mmDM, "", "before the drop")
	mmPosted(t, peer, mmDM, "", "Before.", logs)
	peer.Drop()
	peer.Say(mmAlice, mmDM, "", "while it was down")
	require.Eventually(t, func() bool { all, resumed := peer.Connections(); return all == 2 && resumed == 1 && peer.Connected() },
		time.Minute, 50*time.Millisecond, "the channel never resumed\n%s", logs)
	mmPosted(t, peer, mmDM, "", "Meanwhile.", logs)

	peer.Redeliver(before)
	peer.Say(mmAlice, mmDM, "", "after the drop")
	mmPosted(t, peer, mmDM, "", "After.", logs)
	require.Equal(t, 3, model.Count(), "the redelivered post never reached the model again")
	require.Len(t, peer.Posts(mmDM), 3, "one answer per message")
}
