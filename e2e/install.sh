#!/usr/bin/env bash
# Installs the npm-published peers the Go tests run against (the MCP servers
# for ../mcp and ../integration, telegram-test-api for the Telegram tests,
# aimock for the Anthropic, Azure and Responses model APIs)
# into e2e/node_modules (repo-local), at the exact versions in package.json.
# No lock file: npm lock files may record registry URLs, which this repo must
# not name; the exact versions in package.json pin the servers themselves.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "e2e/install.sh: node and npm are needed for the e2e peers (Node.js >= 18)" >&2
  exit 1
fi

# Skip the network when every pinned package is already installed.
if node -e '
  const want = require("./package.json").dependencies;
  for (const [name, version] of Object.entries(want)) {
    let have;
    try { have = require(`./node_modules/${name}/package.json`).version; } catch { process.exit(1); }
    if (have !== version) process.exit(1);
  }' 2>/dev/null; then
  echo "e2e/install.sh: e2e peers already installed in $(pwd)/node_modules"
  exit 0
fi

npm install --no-audit --no-fund --no-package-lock
for bin in mcp-server-everything mcp-server-filesystem llmock; do
  if [ ! -x "node_modules/.bin/$bin" ]; then
    echo "e2e/install.sh: node_modules/.bin/$bin missing after npm install" >&2
    exit 1
  fi
done
if [ ! -f node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js ]; then
  echo "e2e/install.sh: the MCP SDK's OAuth demo server is missing after npm install" >&2
  exit 1
fi
if ! node -e 'require("./node_modules/telegram-test-api")' 2>/dev/null; then
  echo "e2e/install.sh: telegram-test-api missing after npm install" >&2
  exit 1
fi
echo "e2e/install.sh: e2e peers installed in $(pwd)/node_modules"
