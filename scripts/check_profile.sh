#!/usr/bin/env bash
# Checks that a profile page renders: opens PROFILE_DIR/profile.html in headless Chromium,
# dumps the DOM after the scripts ran, and requires <body data-rendered="ok"> with an empty
# <pre id="errors">. Prints a one-line verdict; exits 0 when the page rendered, 1 when it did
# not, 2 on bad usage or a missing browser.
#
#   scripts/check_profile.sh PROFILE_DIR [SCREENSHOT.png]
#
# With SCREENSHOT.png it also saves a 1400x900 screenshot of the page. Needs `chromium`
# (Debian: apt-get install chromium); set CHROMIUM=/path/to/browser to use another binary.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 PROFILE_DIR [SCREENSHOT.png]" >&2
    exit 2
fi
if [[ ! -f "$1/profile.html" ]]; then
    echo "FAIL: no profile.html in $1" >&2
    exit 2
fi
page="$(cd "$1" && pwd)/profile.html"
screenshot="${2:-}"
browser="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}"
if [[ -z "$browser" ]]; then
    echo "FAIL: no chromium found (install it, or set CHROMIUM)" >&2
    exit 2
fi

profile_dir="$(mktemp -d)"
dom="$(mktemp)"
trap 'rm -rf "$profile_dir" "$dom"' EXIT
# A fresh user-data dir and no background services: the page must not need the network.
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --user-data-dir="$profile_dir" --virtual-time-budget=5000)

if ! "$browser" "${flags[@]}" --dump-dom "file://$page" >"$dom" 2>/dev/null; then
    echo "FAIL: $browser could not load $page" >&2
    exit 1
fi
if [[ -n "$screenshot" ]]; then
    "$browser" "${flags[@]}" --hide-scrollbars --window-size=1400,900 \
        --screenshot="$screenshot" "file://$page" >/dev/null 2>&1 || true
fi

body_tag="$(grep -o '<body[^>]*>' "$dom" | head -n 1 || true)"
rendered="$(sed -n 's/.*data-rendered="\([^"]*\)".*/\1/p' <<<"$body_tag")"
# The errors element must be present and empty (the page fills it on any JS exception).
errors_empty=no
if grep -q '<pre id="errors"></pre>' "$dom"; then
    errors_empty=yes
fi
errors="$(tr '\n' ' ' <"$dom" | sed -n 's/.*<pre id="errors">\([^<]*\)<\/pre>.*/\1/p' | cut -c1-300)"

render_ms="$(sed -n 's/.*data-render-ms="\([^"]*\)".*/\1/p' <<<"$body_tag")"

if [[ "$rendered" == "ok" && "$errors_empty" == yes ]]; then
    echo "OK: $page rendered in ${render_ms:-?} ms (data-rendered=ok, no errors)${screenshot:+; screenshot $screenshot}"
    exit 0
fi
echo "FAIL: $page data-rendered='${rendered:-missing}' errors='${errors:-}'" >&2
exit 1
