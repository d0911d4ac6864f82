#!/usr/bin/env bash
# Installs what the VS Code end-to-end test (vscode-extension/e2e/run.mjs) needs, from the
# package registries only (Debian's apt and npm; nothing from GitHub, no browser or VS Code
# download at test time):
#
#   1. Debian packages: chromium (the browser playwright-core drives), ripgrep (VS Code's search
#      binary, which @vscode/ripgrep would otherwise download from GitHub), and the headers the
#      native modules of code-server build against (libkrb5-dev for `kerberos`, ...).
#   2. code-server (VS Code in a browser, from npm) into vscode-extension/.e2e-cache/code-server,
#      installed in steps: its own postinstall downloads ripgrep from GitHub, so the scripts are
#      skipped and the native modules rebuilt here, against the Node headers in /usr/include/node.
#   3. playwright-core into vscode-extension/e2e/node_modules (`npm ci`, pinned by the lock file).
#
# Each step leaves a stamp file, so a second run only checks and returns in about a second.
# Remove vscode-extension/.e2e-cache to start over. Environment:
#   TORCHLINT_E2E_CACHE   where code-server and the stamps go (default vscode-extension/.e2e-cache)
#   TORCHLINT_E2E_NO_APT  set to 1 to never call apt-get (missing packages then fail the script)
set -Eeuo pipefail

EXT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
E2E_DIR=$EXT_DIR/e2e
CACHE=${TORCHLINT_E2E_CACHE:-$EXT_DIR/.e2e-cache}
STAMPS=$CACHE/stamps
CS_VERSION=4.100.3          # the newest code-server whose engines.node is "20" (VS Code 1.100.3)
CS_NODE_MAJOR=20
CS_DIR=$CACHE/code-server   # npm project folder; code-server lands in $CS_DIR/node_modules
CS_PKG=$CS_DIR/node_modules/code-server
APT_PACKAGES=(chromium fonts-liberation ripgrep libkrb5-dev pkg-config python3 make g++)

# Native modules: build against the local Node headers (node-gyp would download them otherwise),
# let node-pty's `npx node-gyp` run without a prompt, and let code-server's scripts run as root.
export npm_config_nodedir=${npm_config_nodedir:-/usr}
export npm_config_yes=true
export npm_config_unsafe_perm=true
export npm_config_audit=false
export npm_config_fund=false
export npm_config_update_notifier=false

START_ALL=$(date +%s)
CURRENT_STEP=""

log() { printf '[e2e-setup] %s\n' "$*"; }
die() {
    printf '[e2e-setup] ERROR: %s\n' "$*" >&2
    exit 1
}
on_error() {
    local status=$?
    ((BASH_SUBSHELL == 0)) || exit "$status" # reported once, by the main shell
    printf '[e2e-setup] ERROR: step "%s" failed (exit status %s, line %s); its output is above.\n' \
        "${CURRENT_STEP:-setup}" "$status" "$1" >&2
    printf '[e2e-setup] Fix the cause and run %s again: finished steps are skipped.\n' "$0" >&2
    exit "$status"
}
trap 'on_error $LINENO' ERR

# step NAME STAMP-CONTENT FUNCTION: runs FUNCTION unless $STAMPS/NAME holds STAMP-CONTENT.
step() {
    local name=$1 content=$2 fn=$3 stamp=$STAMPS/$1 t0
    if [[ -f $stamp && $(cat "$stamp") == "$content" ]]; then
        log "$name: done before (stamp $stamp)"
        return 0
    fi
    CURRENT_STEP=$name
    log "$name: running"
    t0=$(date +%s)
    rm -f "$stamp"
    "$fn"
    mkdir -p "$STAMPS"
    printf '%s' "$content" >"$stamp"
    log "$name: done in $(($(date +%s) - t0)) s"
    CURRENT_STEP=""
}

# --- checks ---------------------------------------------------------------------------------

command -v node >/dev/null || die "node is not on PATH (Node $CS_NODE_MAJOR is needed for code-server $CS_VERSION)"
command -v npm >/dev/null || die "npm is not on PATH"
NODE_MAJOR=$(node -p 'process.versions.node.split(".")[0]')
[[ $NODE_MAJOR == "$CS_NODE_MAJOR" ]] ||
    die "code-server $CS_VERSION needs Node $CS_NODE_MAJOR (its engines.node), this is Node $(node -v)"

# --- 1. Debian packages -----------------------------------------------------------------------

missing_packages() {
    local pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || printf '%s ' "$pkg"
    done
}

install_apt() {
    local missing
    missing=$(missing_packages)
    [[ -z $missing ]] && return 0
    if [[ ${TORCHLINT_E2E_NO_APT:-0} == 1 || $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
        die "missing Debian packages: $missing
  install them first, e.g.: sudo apt-get install -y --no-install-recommends $missing
  (this script calls apt-get itself only when it runs as root and TORCHLINT_E2E_NO_APT is not 1)"
    fi
    log "apt-get install $missing"
    export DEBIAN_FRONTEND=noninteractive
    # An update first when the package lists are missing or a day old (a fresh container).
    if [[ -z $(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | head -1) ]]; then
        apt-get update -qq
    fi
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null; }
}

CURRENT_STEP=apt
t0=$(date +%s)
install_apt
log "apt: Debian packages present ($(($(date +%s) - t0)) s)"
[[ -x /usr/bin/chromium ]] || die "/usr/bin/chromium is missing after the package install"
[[ -x /usr/bin/rg ]] || die "/usr/bin/rg (Debian's ripgrep) is missing after the package install"
[[ -f $npm_config_nodedir/include/node/node_version.h ]] ||
    die "no Node headers in $npm_config_nodedir/include/node (needed to build code-server's native modules offline); set npm_config_nodedir to a Node $CS_NODE_MAJOR install that has them"
CURRENT_STEP=""

# --- 2. code-server, in steps -----------------------------------------------------------------

cs_fetch() {
    # The package and its dependencies, no install scripts (the postinstall downloads ripgrep).
    rm -rf "$CS_DIR"
    mkdir -p "$CS_DIR"
    printf '{ "name": "torchlint-e2e-code-server", "private": true }\n' >"$CS_DIR/package.json"
    (cd "$CS_DIR" && npm install --no-save --ignore-scripts --loglevel=error "code-server@$CS_VERSION")
    [[ -f $CS_PKG/out/node/entry.js ]] || die "code-server $CS_VERSION was not unpacked into $CS_PKG"
}

cs_rebuild_argon2() {
    (cd "$CS_DIR" && npm rebuild --loglevel=error argon2)
}

cs_vscode_modules() {
    # VS Code's server dependencies (lib/vscode), again without their install scripts.
    (cd "$CS_PKG/lib/vscode" && npm install --omit=dev --ignore-scripts --loglevel=error)
}

cs_vscode_rebuild() {
    # Debian's ripgrep stands in for @vscode/ripgrep's download (its postinstall does nothing
    # when bin/ exists); then the install scripts that were skipped, native builds included.
    local rg_dir=$CS_PKG/lib/vscode/node_modules/@vscode/ripgrep
    [[ -d $rg_dir ]] || die "$rg_dir is missing: the lib/vscode install did not complete"
    mkdir -p "$rg_dir/bin"
    ln -sf /usr/bin/rg "$rg_dir/bin/rg"
    (cd "$CS_PKG/lib/vscode" && npm rebuild --loglevel=error)
}

cs_links() {
    # What code-server's postinstall.sh does after its installs.
    local vs=$CS_PKG/lib/vscode
    ln -sfn node_modules "$vs/node_modules.asar"
    ln -sf code-linux.sh "$vs/bin/remote-cli/code-server"
    ln -sf browser-linux.sh "$vs/bin/helpers/browser.sh"
}

cs_builtin_extensions() {
    (cd "$CS_PKG/lib/vscode/extensions" && npm install --omit=dev --loglevel=error)
}

cs_check() {
    local version
    # Always with --config: without it code-server writes a default ~/.config/code-server/config.yaml.
    printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' >"$CACHE/check-config.yaml"
    version=$(XDG_DATA_HOME=$CACHE/xdg XDG_CONFIG_HOME=$CACHE/xdg XDG_CACHE_HOME=$CACHE/xdg \
        "$CS_DIR/node_modules/.bin/code-server" --config "$CACHE/check-config.yaml" --version 2>&1 | head -1) ||
        die "code-server does not start: $version"
    [[ $version == "$CS_VERSION"* ]] || die "code-server --version printed '$version', expected $CS_VERSION"
    log "code-server --version: $version"
}

# A removed or half-deleted install starts over, whatever the stamps say.
if [[ ! -f $CS_PKG/out/node/entry.js ]]; then
    rm -f "$STAMPS"/code-server-*
fi
step code-server-fetch "$CS_VERSION" cs_fetch
step code-server-argon2 "$CS_VERSION" cs_rebuild_argon2
step code-server-vscode-modules "$CS_VERSION" cs_vscode_modules
step code-server-vscode-rebuild "$CS_VERSION" cs_vscode_rebuild
step code-server-links "$CS_VERSION" cs_links
step code-server-builtin-extensions "$CS_VERSION" cs_builtin_extensions
step code-server-check "$CS_VERSION" cs_check

# --- 3. playwright-core -----------------------------------------------------------------------

playwright_ci() {
    (cd "$E2E_DIR" && npm ci --loglevel=error)
    [[ -f $E2E_DIR/node_modules/playwright-core/package.json ]] || die "playwright-core is missing after npm ci"
}

# The stamp holds the lock file's hash: a changed lock file installs again.
LOCK_HASH=$(sha256sum "$E2E_DIR/package-lock.json" | cut -d' ' -f1)
if [[ ! -d $E2E_DIR/node_modules/playwright-core ]]; then rm -f "$STAMPS/playwright-core"; fi
step playwright-core "$LOCK_HASH" playwright_ci

log "ready in $(($(date +%s) - START_ALL)) s: code-server $CS_DIR/node_modules/.bin/code-server, browser /usr/bin/chromium"
