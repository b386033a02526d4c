#!/usr/bin/env bash
# The house is layered: no include points up (scripts/check_layers.sh); and
# the CLI is thin, library functions short (scripts/check_size.sh, #13).
set -eu
cd "$(dirname "$0")/../.."
scripts/check_layers.sh
scripts/check_size.sh
