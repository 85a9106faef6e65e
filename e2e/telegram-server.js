// Starts telegram-test-api (a Telegram Bot API emulator) on 127.0.0.1 for
// the Telegram end-to-end tests: node telegram-server.js PORT (or
// TELEGRAM_TEST_PORT). It prints "listening" once it accepts requests and
// stops on SIGTERM or SIGINT. Messages are kept 10 minutes (the package's
// default of 60 s could drop them mid-test).
'use strict';
const TelegramServer = require('telegram-test-api');

const port = Number(process.argv[2] || process.env.TELEGRAM_TEST_PORT || 9000);
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error(`telegram-server: bad port ${process.argv[2] || process.env.TELEGRAM_TEST_PORT}`);
  process.exit(2);
}
const server = new TelegramServer({ port, host: '127.0.0.1', storeTimeout: 600 });
server.start().then(
  () => console.log(`telegram-test-api listening on http://127.0.0.1:${port}`),
  (err) => { console.error(`telegram-server: ${err}`); process.exit(1); },
);
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => server.stop().finally(() => process.exit(0)));
}
