package config

// nanobot's sections this build reads without acting on them: each key is
// tagged `unused:"why"`, so a value other than nanobot's default is named
// in a warning at load and in `nanobot status`, never silently dropped.

// CLIAppsTool is tools.cliApps, nanobot's installer of command-line apps.
type CLIAppsTool struct {
	Enable            bool `json:"enable" unused:"run_cli_app is not in this build: its catalog is a remote registry"`
	InstallTimeout    int  `json:"installTimeout" unused:"run_cli_app is not in this build: its catalog is a remote registry"`
	RunTimeout        int  `json:"runTimeout" unused:"run_cli_app is not in this build: its catalog is a remote registry"`
	CatalogTTLSeconds int  `json:"catalogTtlSeconds" unused:"run_cli_app is not in this build: its catalog is a remote registry"`
}

func defaultCLIApps() CLIAppsTool {
	return CLIAppsTool{Enable: true, InstallTimeout: 300, RunTimeout: 60, CatalogTTLSeconds: 3600}
}
