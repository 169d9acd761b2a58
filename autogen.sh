#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Regenerate the autotools build; run once after a fresh clone.
set -e
cd "$(dirname "$0")"
autoreconf --force --install --verbose
