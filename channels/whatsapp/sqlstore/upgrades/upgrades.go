// Copyright (c) 2025 Tulir Asokan
//
// This Source Code Form is subject to the terms of the Mozilla Public
// License, v. 2.0. If a copy of the MPL was not distributed with this
// file, You can obtain one at http://mozilla.org/MPL/2.0/.

package upgrades

import (
	"embed"

	"go.mau.fi/util/dbutil"
)

//go:embed *.sql
var upgrades embed.FS

// Table is built with util's upgrade-table builder: go.mau.fi/util v0.10+
// (which mautrix needs) dropped the RegisterFS this copy's upstream calls.
var Table = dbutil.BuildUpgradeTable().WithFS(upgrades).Finish()
