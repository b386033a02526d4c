#!/usr/bin/env bash
# The house is layered: no include points up (scripts/check_layers.sh).
set -eu
cd "$(dirname "$0")/../.."
scripts/check_layers.sh
