package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nanobot-durable/nanobot/channels/discord/discordpeer"
	"github.com/nanobot-durable/nanobot/channels/slack/slackpeer"
	"github.com/nanobot-durable/nanobot/chat"
	"github.com/nanobot-durable/nanobot/providers/modeltest"
)

// The soak's messages name their kind and a tag unique to the message:
// "soak-tools s12" is Slack's 12th, a multi-tool turn.
var (
	soakAsk       = regexp.MustCompile(`soak-(tools|approve|spawn) ([swd]\d+)`)
	soakAnswer    = regexp.MustCompile(`\b(done|spawned|reported) ([swd]\d+)\.`)
	soakSubTag    = regexp.MustCompile(`sub-task ([swd]\d+)`)
	soakSubReport = regexp.MustCompile(`\[Subagent '([swd]\d+)'`)
	soakAsked     = regexp.MustCompile(`Approval needed \[([^\]]+)\]: exec .*appr-([swd]\d+)`)
)

const (
	soakSlackChannel = "C0SOAK001"
	soakCronChannel  = "C0CRON001"
	soakSlackUser    = "U0ALICE01"
	soakCronReply    = "cron fired."
)

// soakModel answers from the request alone, so a retried call gets the same
// answer. A tools turn reads, writes and execs (appending its tag to
// counter.txt) and says "done TAG."; an approve turn runs a risky exec that
// waits for /approve; a spawn turn starts a subagent that execs "sub-TAG",
// says "spawned TAG." and, on the subagent's report, "reported TAG.".
func soakModel(req *modeltest.RecordedRequest) modeltest.Step {
	delay := time.Duration(rand.IntN(150)) * time.Millisecond
	last := req.Messages[len(req.Messages)-1]
	results := map[string]bool{}
	for _, m := range req.Messages {
		if m.Role == chat.RoleTool {
			results[m.ToolCallID] = true
		}
	}
	// pending is the first call whose result the request lacks.
	pending := func(calls ...modeltest.Call) (modeltest.Call, bool) {
		for _, c := range calls {
			if !results[c.ID] {
				return c, true
			}
		}
		return modeltest.Call{}, false
	}
	text := func(s string) modeltest.Step { return modeltest.Text(s).Delay(delay) }
	if strings.Contains(req.Messages[0].Content, "# Subagent") {
		tag := "unknown"
		for _, m := range req.Messages {
			if s := soakSubTag.FindStringSubmatch(m.Content); s != nil {
				tag = s[1]
			}
		}
		if c, ok := pending(modeltest.Call{ID: tag + "-subexec", Name: "exec", Args: `{"command":"echo sub-` + tag + ` >> counter.txt"}`}); ok {
			return modeltest.ToolCalls(c).Delay(delay)
		}
		return text("the subagent of " + tag + " is finished")
	}
	if strings.Contains(last.Content, "[Scheduled task]") {
		return text(soakCronReply)
	}
	if s := soakSubReport.FindStringSubmatch(last.Content); s != nil {
		return text("reported " + s[1] + ".")
	}
	var kind, tag string
	for _, m := range req.Messages {
		if s := soakAsk.FindStringSubmatch(m.Content); m.Role == chat.RoleUser && s != nil {
			kind, tag = s[1], s[2]
		}
	}
	var calls []modeltest.Call
	answer := "done " + tag + "."
	switch kind {
	case "tools":
		calls = []modeltest.Call{
			{ID: tag + "-read", Name: "read_file", Args: `{"path":"seed.txt"}`},
			{ID: tag + "-write", Name: "write_file", Args: fmt.Sprintf(`{"path":"out/%s.txt","content":"%s"}`, tag, tag)},
			{ID: tag + "-exec", Name: "exec", Args: `{"command":"echo ` + tag + ` >> counter.txt; sleep 0.2"}`}}
	case "approve":
		calls = []modeltest.Call{{ID: tag + "-appr", Name: "exec",
			Args: fmt.Sprintf(`{"command":"mkdir -p b-%s && rm -rf b-%s && echo appr-%s >> counter.txt"}`, tag, tag, tag)}}
	case "spawn":
		calls = []modeltest.Call{{ID: tag + "-spawn", Name: "spawn", Args: `{"task":"sub-task ` + tag + `","label":"` + tag + `"}`}}
		answer = "spawned " + tag + "."
	default:
		return text("ok")
	}
	if c, ok := pending(calls...); ok {
		return modeltest.ToolCalls(c).Delay(delay)
	}
	return text(answer)
}

// soakSent is one message a person sent in the soak.
type soakSent struct {
	channel, kind, session string
	at                     time.Time
	ambiguous              bool // the web chat's POST failed after it may have been taken: no answer is not a loss
}

// soakLedger is every message sent, by tag.
type soakLedger struct {
	mu   sync.Mutex
	sent map[string]soakSent
	tags []string
}

func (l *soakLedger) add(tag string, s soakSent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sent[tag]; !ok {
		l.tags = append(l.tags, tag)
	}
	l.sent[tag] = s
}

func (l *soakLedger) all() ([]string, map[string]soakSent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]soakSent, len(l.sent))
	for k, v := range l.sent {
		out[k] = v
	}
	return append([]string(nil), l.tags...), out
}

// soakKind picks a message's kind in turn from kinds.
func soakKind(n int, kinds ...string) string { return kinds[n%len(kinds)] }

// slackTraffic mentions the bot in a new thread every few seconds (its own
// session each), offering each event until the gateway acknowledges it.
func slackTraffic(ctx context.Context, peer *slackpeer.Peer, ledger *soakLedger) {
	for n := 0; ctx.Err() == nil; n++ {
		tag := fmt.Sprintf("s%d", n)
		kind := soakKind(n, "tools", "spawn", "tools")
		ts := fmt.Sprintf("17%08d.000100", n)
		ev := slackpeer.AppMention(soakSlackChannel, soakSlackUser, ts, "", fmt.Sprintf("<@%s> soak-%s %s", slackpeer.BotUserID, kind, tag))
		ledger.add(tag, soakSent{channel: "slack", kind: kind, session: "slack:" + soakSlackChannel + ":" + ts, at: time.Now()})
		// Slack redelivers an unacknowledged event; this does so until the restarted gateway takes it.
		for retry := 0; !peer.Offer(fmt.Sprintf("env-%s-%d", tag, retry), "Ev"+tag, retry, ev, 5*time.Second); retry++ {
			time.Sleep(time.Second)
		}
		soakPause(ctx, 3*time.Second)
	}
}

// webTraffic posts to the web chat's /api/send every few seconds, each
// message in a chat of its own. A refused connection is tried again (nothing
// was taken); a POST that failed after the gateway may have taken it is
// marked ambiguous, and the next message gets a new tag.
func webTraffic(ctx context.Context, base string, ledger *soakLedger) {
	hc := &http.Client{Timeout: 15 * time.Second}
	for n := 0; ctx.Err() == nil; n++ {
		tag := fmt.Sprintf("w%d", n)
		kind := soakKind(n, "tools", "spawn")
		body := fmt.Sprintf(`{"chat":"soak-%s","text":"soak-%s %s"}`, tag, kind, tag)
		for ctx.Err() == nil {
			at := time.Now()
			resp, err := hc.Post(base+"api/send", "application/json", strings.NewReader(body))
			if errors.Is(err, syscall.ECONNREFUSED) {
				time.Sleep(time.Second)
				continue
			}
			ok := err == nil && resp.StatusCode == http.StatusOK
			if resp != nil {
				_ = resp.Body.Close()
			}
			ledger.add(tag, soakSent{channel: "web", kind: kind, session: "web:soak-" + tag, at: at, ambiguous: !ok})
			break
		}
		soakPause(ctx, 4*time.Second)
	}
}

// discordTraffic is a person in a DM: a message, then (for an approve turn)
// "/approve ID" typed once the request shows, then the next message once the
// answer came. Once ctx ends no new message is sent, but the last one is still
// seen through (its approval answered) for up to three minutes. A message is
// sent only while the bot is connected; Discord keeps no backlog for a bot
// that identifies anew, so one that reached a gateway in its last moments is
// told apart by the time of its kill.
func discordTraffic(ctx context.Context, dc *discordpeer.Peer, dm string, author discordpeer.User, ledger *soakLedger) {
	say := func(text string, until time.Time) bool {
		for !dc.Connected() && time.Now().Before(until) {
			time.Sleep(100 * time.Millisecond)
		}
		if !dc.Connected() {
			return false
		}
		dc.Say(discordpeer.Incoming{ChannelID: dm, Author: author, Content: text})
		return true
	}
	for n := 0; ctx.Err() == nil; n++ {
		tag := fmt.Sprintf("d%d", n)
		kind := soakKind(n, "approve", "tools")
		for ctx.Err() == nil && !dc.Connected() {
			time.Sleep(100 * time.Millisecond)
		}
		if ctx.Err() != nil || !say(fmt.Sprintf("soak-%s %s", kind, tag), time.Now()) {
			return
		}
		ledger.add(tag, soakSent{channel: "discord", kind: kind, session: "discord:" + dm, at: time.Now()})
		var approved time.Time
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			answers, asked := discordAnswers(dc, dm)
			if answers[tag]["done"] > 0 {
				break
			}
			// A person types /approve again when the first got no answer for a minute.
			if id, ok := asked[tag]; ok && time.Since(approved) > time.Minute && say("/approve "+id, deadline) {
				approved = time.Now()
			}
		}
		soakPause(ctx, 2*time.Second)
	}
}

func soakPause(ctx context.Context, around time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(around/2 + time.Duration(rand.Int64N(int64(around)))):
	}
}

// soakTally counts, per tag, the answers of each word ("done", "spawned", "reported").
type soakTally map[string]map[string]int

func (s soakTally) count(text string) {
	for _, m := range soakAnswer.FindAllStringSubmatch(text, -1) {
		if s[m[2]] == nil {
			s[m[2]] = map[string]int{}
		}
		s[m[2]][m[1]]++
	}
}

// discordAnswers are the bot's answers in the DM, and the approval requests it showed (tag → request id).
func discordAnswers(dc *discordpeer.Peer, dm string) (soakTally, map[string]string) {
	tally, asked := soakTally{}, map[string]string{}
	for _, m := range dc.Messages(dm) {
		tally.count(m.Content)
		if s := soakAsked.FindStringSubmatch(m.Content); s != nil {
			asked[s[2]] = s[1]
		}
	}
	return tally, asked
}

// slackAnswers are the bot's answers in the soak's threads as they show now, and the cron job's posts.
func slackAnswers(peer *slackpeer.Peer) (soakTally, int) {
	tally, cron := soakTally{}, 0
	for _, p := range peer.Posts() {
		shown, _ := peer.Shown(p.Channel, p.TS)
		switch p.Channel {
		case soakSlackChannel:
			tally.count(shown)
		case soakCronChannel:
			if strings.Contains(shown, soakCronReply) {
				cron++
			}
		}
	}
	return tally, cron
}

// webAnswers reads each web chat's history (its journal): the assistant's answers.
func webAnswers(t *testing.T, base string, tags []string, sent map[string]soakSent) soakTally {
	tally := soakTally{}
	for _, tag := range tags {
		if sent[tag].channel != "web" {
			continue
		}
		h, err := getHistory(t, base, "soak-"+tag)
		if err != nil {
			continue // the gateway is restarting: counted on the next look
		}
		for _, m := range h.Messages {
			if m.Role == chat.RoleAssistant {
				tally.count(m.Text)
			}
		}
	}
	return tally
}

// soakOutcome is one message's fate: "once", "twice" or "lost". A spawn
// turn's answer is its subagent's report; "spawned" comes at most once, and
// not at all when the report reached the turn before its answer did.
func soakOutcome(kind string, got map[string]int) string {
	for _, n := range got {
		if n > 1 {
			return "twice"
		}
	}
	final := map[string]string{"spawn": "reported"}[kind]
	if final == "" {
		final = "done"
	}
	if got[final] == 0 {
		return "lost"
	}
	return "once"
}
