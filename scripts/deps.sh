#!/usr/bin/env bash
# Installs the Debian packages the build, tests and demo need, when missing.
set -eu
need=(gcc make bc pkg-config libopenblas-dev libxgboost-dev clang libclang-rt-14-dev)
missing=()
for p in "${need[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
