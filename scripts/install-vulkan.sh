#!/usr/bin/env bash
# Makes sure a Vulkan driver is present: on a machine without one (no GPU, CI), installs Mesa's
# lavapipe, which runs Vulkan compute on the CPU. Debian/Ubuntu; a no-op where a driver exists.
set -euo pipefail

# ldconfig lives in /sbin, which a normal user's PATH may lack.
libs() { { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null; }
have_loader() { libs | grep 'libvulkan\.so\.1' >/dev/null; }
have_icd() { compgen -G '/usr/share/vulkan/icd.d/*.json' >/dev/null || compgen -G '/etc/vulkan/icd.d/*.json' >/dev/null; }

if have_loader && have_icd; then
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-vulkan: no Vulkan driver found; installing mesa-vulkan-drivers (lavapipe) and libvulkan1" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers libvulkan1 >/dev/null
