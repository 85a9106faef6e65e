package providers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nanobot-durable/nanobot/config"
	"github.com/nanobot-durable/nanobot/providers"
	"github.com/nanobot-durable/nanobot/providers/aimocktest"
)

func azureModel(t *testing.T, srv *aimocktest.Server, entry config.ProviderConfig) providers.Model {
	t.Helper()
	entry.APIKey, entry.APIBase = "azure-secret", srv.URL()
	cfg := testConfig(map[string]config.ProviderConfig{"azure_openai": entry})
	d := &cfg.Agents.Defaults
	d.Model, d.Provider, d.MaxTokens = "azure/nano-gpt4o", "auto", 512
	m, err := (&providers.Factory{Getenv: noEnv}).Model(cfg, "")
	require.NoError(t, err)
	require.Equal(t, "azure_openai", m.ProviderName, "the azure keyword picks it")
	require.Equal(t, "nano-gpt4o", m.APIModel, "the deployment")
	return m
}

func TestAzureDeploymentPathAndKeyHeader(t *testing.T) {
	srv := aimocktest.Start(t, weatherFixtures(t))
	m := azureModel(t, srv, config.ProviderConfig{})
	for _, stream := range []bool{false, true} {
		roundTrip(t, m.Provider, stream)
	}
	reqs := srv.Requests()
	require.Len(t, reqs, 4)
	for _, r := range reqs {
		require.Equal(t, "/openai/deployments/nano-gpt4o/chat/completions", r.Path)
		require.Equal(t, providers.AzureAPIVersion, r.Query.Get("api-version"))
		require.Equal(t, "azure-secret", r.Header.Get("api-key"))
		require.Empty(t, r.Header.Get("Authorization"), "Azure takes the key in api-key")
		require.NotEmpty(t, r.Header.Get("x-session-affinity"))
		var body map[string]any
		r.JSON(t, &body)
		require.EqualValues(t, 512, body["max_completion_tokens"], "Azure takes max_completion_tokens")
		require.NotContains(t, body, "max_tokens")
	}
	for _, e := range srv.Journal(t) {
		require.Equal(t, 200, e.Response.Status, "aimock served %s as Azure", e.Path)
		require.Contains(t, e.Headers, "api-key", "aimock saw the key header (and redacts it)")
	}
}

func TestAzureAPIVersionFromExtraQuery(t *testing.T) {
	srv := aimocktest.Start(t, weatherFixtures(t))
	m := azureModel(t, srv, config.ProviderConfig{ExtraQuery: map[string]string{"api-version": "2025-04-01-preview"}})
	roundTrip(t, m.Provider, false)
	require.Equal(t, "2025-04-01-preview", srv.Requests()[0].Query.Get("api-version"))
}

func TestAzureResponsesAPI(t *testing.T) {
	srv := aimocktest.Start(t, weatherFixtures(t))
	m := azureModel(t, srv, config.ProviderConfig{APIType: "responses"})
	for _, stream := range []bool{false, true} {
		roundTrip(t, m.Provider, stream)
	}
	for _, r := range srv.Requests() {
		require.Equal(t, "/openai/v1/responses", r.Path)
		require.Equal(t, "azure-secret", r.Header.Get("api-key"))
		require.Empty(t, r.Header.Get("Authorization"))
		var body responsesBody
		r.JSON(t, &body)
		require.Equal(t, "nano-gpt4o", body.Model, "the deployment names the model")
	}
}
