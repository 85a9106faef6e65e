package main

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/dynamicconfig"
)

func mustParse(t *testing.T, args ...string) *options {
	t.Helper()
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("parseFlags(%q): %v", args, err)
	}
	return o
}

func TestDefaults(t *testing.T) {
	o := mustParse(t)
	if o.IP != "127.0.0.1" || o.Port != 7233 || o.UIPort != 8233 || o.UIIP != "127.0.0.1" {
		t.Errorf("got ip=%s port=%d ui=%s:%d", o.IP, o.Port, o.UIIP, o.UIPort)
	}
	if o.Headless || o.DBFilename != "" || o.LogLevel != "warn" || o.LogFormat != "text" {
		t.Errorf("unexpected defaults: %+v", o)
	}
	if !reflect.DeepEqual(o.Namespaces, []string{"default"}) {
		t.Errorf("namespaces = %v", o.Namespaces)
	}
}

func TestPortsAndUIDefaultFollowPort(t *testing.T) {
	o := mustParse(t, "--port", "17233", "--ip=0.0.0.0", "--headless", "--db-filename", "/tmp/x.db")
	if o.Port != 17233 || o.UIPort != 18233 || o.UIIP != "0.0.0.0" || !o.Headless || o.DBFilename != "/tmp/x.db" {
		t.Errorf("got %+v", o)
	}
	o = mustParse(t, "--port=17233", "--ui-port=9999", "--ui-ip", "localhost")
	if o.UIPort != 9999 || o.UIIP != "127.0.0.1" {
		t.Errorf("got ui %s:%d", o.UIIP, o.UIPort)
	}
}

func TestStartDevPrefixAccepted(t *testing.T) {
	o := mustParse(t, "server", "start-dev", "-p", "7300", "-f", "a.db")
	if o.Port != 7300 || o.DBFilename != "a.db" {
		t.Errorf("got %+v", o)
	}
}

func TestRepeatableNamespaces(t *testing.T) {
	o := mustParse(t, "--namespace", "a", "-n", "b", "--namespace=a", "-n=default", "-n", "c,d")
	want := []string{"default", "a", "b", "c", "d"}
	if !reflect.DeepEqual(o.Namespaces, want) {
		t.Errorf("namespaces = %v, want %v", o.Namespaces, want)
	}
}

func TestSearchAttributes(t *testing.T) {
	o := mustParse(t,
		"--search-attribute", "NanobotSessionKey=Keyword",
		"--search-attribute=Score=double",
		"--search-attribute", "Tags=KeywordList",
		"--search-attribute", "NanobotSessionKey=keyword", // same again: deduplicated
	)
	want := []searchAttribute{
		{"NanobotSessionKey", enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		{"Score", enumspb.INDEXED_VALUE_TYPE_DOUBLE},
		{"Tags", enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST},
	}
	if !reflect.DeepEqual(o.SearchAttributes, want) {
		t.Errorf("search attributes = %v, want %v", o.SearchAttributes, want)
	}
}

func TestDynamicConfigValues(t *testing.T) {
	o := mustParse(t,
		"--dynamic-config-value", "history.foo=1000",
		"--dynamic-config-value", "frontend.x=true",
		"--dynamic-config-value", `x="str"`,
		"--dynamic-config-value", "f=1.5",
		"--dynamic-config-value", `m={"a":[1,2.5,"s"],"b":null}`,
		"--dynamic-config-value", "history.foo=7", // later value wins in the client
	)
	want := []dynamicConfigValue{
		{"history.foo", 1000},
		{"frontend.x", true},
		{"x", "str"},
		{"f", 1.5},
		{"m", map[string]any{"a": []any{1, 2.5, "s"}, "b": nil}},
		{"history.foo", 7},
	}
	if !reflect.DeepEqual(o.DynamicConfig, want) {
		t.Errorf("dynamic config = %#v, want %#v", o.DynamicConfig, want)
	}
	client := buildDynamicConfig(defaultDynamicConfig("http://127.0.0.1:1", nil), o.DynamicConfig)
	if got := client[dynamicconfig.MakeKey("History.Foo")]; got != 7 {
		t.Errorf("history.foo = %v, want 7", got)
	}
	if got := client[dynamicconfig.MakeKey("history.transferProcessorMaxPollRPS")]; got != 1000 {
		t.Errorf("default transferProcessorMaxPollRPS = %v", got)
	}
	if got := client[dynamicconfig.MakeKey("history.workflowIdReuseMinimalInterval")]; got != time.Duration(0) {
		t.Errorf("default workflowIdReuseMinimalInterval = %v", got)
	}
}

func TestDynamicConfigOverridesDefault(t *testing.T) {
	o := mustParse(t, "--dynamic-config-value", "history.transferProcessorMaxPollRPS=50")
	client := buildDynamicConfig(defaultDynamicConfig("http://127.0.0.1:1", nil), o.DynamicConfig)
	if got := client[dynamicconfig.MakeKey("history.transferprocessormaxpollrps")]; got != 50 {
		t.Errorf("override = %v, want 50", got)
	}
}

func TestDynamicConfigNullRestoresServerDefault(t *testing.T) {
	o := mustParse(t, "--dynamic-config-value", "history.timerProcessorSchedulerWorkerCount=null")
	client := buildDynamicConfig(defaultDynamicConfig("http://127.0.0.1:1", nil), o.DynamicConfig)
	if got, ok := client[dynamicconfig.MakeKey("history.timerProcessorSchedulerWorkerCount")]; ok {
		t.Errorf("null left the key set to %v", got)
	}
	if got := client[dynamicconfig.MakeKey("history.transferProcessorSchedulerWorkerCount")]; got != devTaskWorkers {
		t.Errorf("other task workers = %v, want %d", got, devTaskWorkers)
	}
}

func TestSQLiteMaxConns(t *testing.T) {
	cfg, err := sqlConfig(mustParse(t, "--db-filename", "/tmp/td/x.db", "--sqlite-max-conns", "4"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 4 || cfg.MaxIdleConns != 4 {
		t.Errorf("pool = %d/%d, want 4/4", cfg.MaxConns, cfg.MaxIdleConns)
	}
	if got := cfg.ConnectAttributes["journal_size_limit"]; got != "67108864" {
		t.Errorf("journal_size_limit = %q: a file database's WAL would keep its high-water mark", got)
	}
	_, err = sqlConfig(mustParse(t, "--db-filename", "/tmp/td/x.db", "--sqlite-max-conns", "2", "--sqlite-pragma", "journal_mode=delete"))
	if err == nil || !strings.Contains(err.Error(), "needs journal_mode=wal") {
		t.Errorf("max conns without WAL: err = %v", err)
	}
	if cfg, err = sqlConfig(mustParse(t)); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 1 {
		t.Errorf("memory pool = %d, want 1", cfg.MaxConns)
	}
}

func TestPragmas(t *testing.T) {
	o := mustParse(t, "--sqlite-pragma", "journal_mode=delete", "--sqlite-pragma=Synchronous=FULL", "--sqlite-pragma", "journal_mode=wal")
	want := []pragma{{"journal_mode", "wal"}, {"synchronous", "FULL"}}
	if !reflect.DeepEqual(o.Pragmas, want) {
		t.Errorf("pragmas = %v, want %v", o.Pragmas, want)
	}
}

func TestSQLConfigPragmas(t *testing.T) {
	fileCfg, err := sqlConfig(mustParse(t, "--db-filename", "/tmp/td/x.db", "--sqlite-pragma", "synchronous=full"))
	if err != nil {
		t.Fatal(err)
	}
	attrs := fileCfg.ConnectAttributes
	if attrs["journal_mode"] != "wal" || attrs["synchronous"] != "full" || attrs["mode"] != "rwc" || fileCfg.DatabaseName != "/tmp/td/x.db" {
		t.Errorf("file config = %+v", fileCfg)
	}
	memCfg, err := sqlConfig(mustParse(t))
	if err != nil {
		t.Fatal(err)
	}
	if memCfg.ConnectAttributes["mode"] != "memory" || memCfg.ConnectAttributes["journal_mode"] != "" {
		t.Errorf("memory config = %+v", memCfg)
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"--port", "abc"}, `invalid value "abc" for flag -port`},
		{[]string{"--port", "70000"}, "invalid --port 70000"},
		{[]string{"--ip", "not-an-ip"}, `invalid --ip "not-an-ip"`},
		{[]string{"--port", "7000", "--ui-port", "7000"}, "--ui-port 7000 must differ"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--log-level", "verbose"}, `invalid --log-level "verbose"`},
		{[]string{"--log-format", "xml"}, `invalid --log-format "xml"`},
		{[]string{"-n", ""}, "empty name"},
		{[]string{"--search-attribute", "NoType"}, "want NAME=TYPE"},
		{[]string{"--search-attribute", "X=Float"}, `unknown type "Float"`},
		{[]string{"--search-attribute", "WorkflowId=Keyword"}, "reserved"},
		{[]string{"--search-attribute", "bad-name=Keyword"}, "letters, digits and underscores"},
		{[]string{"--search-attribute", "A=Int", "--search-attribute", "A=Text"}, "already given with type"},
		{[]string{"--dynamic-config-value", "novalue"}, "want KEY=JSONVALUE"},
		{[]string{"--dynamic-config-value", "=1"}, "want KEY=JSONVALUE"},
		{[]string{"--dynamic-config-value", "x=str"}, "value is not JSON"},
		{[]string{"--dynamic-config-value", "x=1 2"}, "trailing data"},
		{[]string{"--dynamic-config-value", "x="}, "value is not JSON"},
		{[]string{"--sqlite-pragma", "journal_mode"}, "want NAME=VALUE"},
		{[]string{"--sqlite-pragma", "mode=memory"}, "is not a pragma name"},
		{[]string{"--sqlite-pragma", "a;b=1"}, "is not a pragma name"},
		{[]string{"--sqlite-max-conns", "0"}, "invalid --sqlite-max-conns 0"},
		{[]string{"--sqlite-max-conns", "4"}, "needs --db-filename"},
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-key", "k.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-client-ca", "ca.pem"}, "--tls-client-ca needs --tls-cert"},
	}
	for _, c := range cases {
		_, err := parseFlags(c.args, io.Discard)
		if err == nil {
			t.Errorf("parseFlags(%q): no error, want %q", c.args, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseFlags(%q) error = %q, want it to contain %q", c.args, err, c.want)
		}
	}
}

func TestHelp(t *testing.T) {
	var out strings.Builder
	_, err := parseFlags([]string{"--help"}, &out)
	if !errors.Is(err, errHelp) {
		t.Fatalf("err = %v, want errHelp", err)
	}
	if !strings.Contains(out.String(), "-dynamic-config-value") {
		t.Errorf("usage lacks flags: %s", out.String())
	}
}

func TestMissingSearchAttributes(t *testing.T) {
	aliases := map[string]string{"Keyword01": "NanobotSessionKey"}
	wanted := []searchAttribute{
		{"NanobotSessionKey", enumspb.INDEXED_VALUE_TYPE_KEYWORD},
		{"Other", enumspb.INDEXED_VALUE_TYPE_INT},
	}
	got := missingSearchAttributes(aliases, wanted)
	want := map[string]enumspb.IndexedValueType{"Other": enumspb.INDEXED_VALUE_TYPE_INT}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("missing = %v, want %v", got, want)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ports, err := freePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("duplicate port %d in %v", p, ports)
		}
		seen[p] = true
	}
}
