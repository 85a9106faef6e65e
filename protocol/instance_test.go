package protocol

import "testing"

func TestInstanceNamesItsQueuesAndIDs(t *testing.T) {
	for _, name := range []string{"", "default"} {
		inst, err := ParseInstance(name)
		if err != nil {
			t.Fatal(err)
		}
		if inst.TaskQueue() != TaskQueue || inst.LLMTaskQueue() != LLMTaskQueue || inst.TurnWorkflowID("cli:x") != "turn/cli:x" ||
			inst.Name("dream") != "dream" || inst.ChannelQueue("telegram") != "nanobot-channel-telegram" {
			t.Fatalf("instance %q renamed the default names", name)
		}
	}
	work, err := ParseInstance("work-2")
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		work.TaskQueue(): "work-2.nanobot", work.LLMTaskQueue(): "work-2.nanobot-llm",
		work.TurnWorkflowID("telegram:1"): "work-2.turn/telegram:1", work.Name("dream"): "work-2.dream",
		work.ChannelQueue("slack"): "work-2.nanobot-channel-slack",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for queue, want := range map[string]Instance{
		"work-2.nanobot": "work-2", "work-2.nanobot-llm": "work-2", "nanobot": DefaultInstance,
		"nanobot-cli-abc": DefaultInstance, "default-test-taskqueue": DefaultInstance, "Bad.nanobot": DefaultInstance,
	} {
		if got := InstanceOfQueue(queue); got != want {
			t.Errorf("InstanceOfQueue(%q) = %q, want %q", queue, got, want)
		}
	}
}

func TestParseInstanceRefusesNamesThatCouldNotBeReadBack(t *testing.T) {
	for _, bad := range []string{"a.b", "Work", "-x", "with space", "x/y", string(make([]byte, 41))} {
		if _, err := ParseInstance(bad); err == nil {
			t.Errorf("ParseInstance(%q) accepted", bad)
		}
	}
}
