#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Generate configure and the build-aux helpers from configure.ac.
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=all
echo "Now run ./configure && make && make check"
